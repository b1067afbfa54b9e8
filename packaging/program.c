/* One of Sesame's programs as installed (packaging/link-programs.sh): all of it is in
 * libsesame.so, and main() is its entry point there (SwiftPM's name: <module>_main). */
extern int ENTRY(int argc, char **argv);

int main(int argc, char **argv) { return ENTRY(argc, argv); }
