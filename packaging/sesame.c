/* `sesame` as installed (packaging/link-programs.sh): the window, or the command line.
 *
 * The window (`sesame` with no command, or with the window's options) is another program,
 * libexec/sesame/sesame-window, the only one that loads GTK and WebKit: this becomes it at once,
 * before any of Sesame is loaded — a launch pays for one exec of this small file, not for loading
 * libsesame.so.0 twice (`make bench`'s sign-in page figure). The commands without a window
 * (`sesame token`, run by mail programs on every sync) load libsesame.so.0 and never GTK.
 *
 * Only the first argument decides, and a wrong guess costs time, never behaviour: the command
 * line's `window` command becomes sesame-window too, and sesame-window runs only the window.
 * test-package.sh checks that every command `sesame --help` lists loads no GTK. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The commands and options of the command line itself (Sources/sesame/SesameCommand.swift). */
static const char *const command_line[] = {
    "login", "accounts", "token", "signout", "device", "doctor", "help",
    "-h", "--help", "--version", "--generate-completion-script", "--experimental-dump-help", NULL,
};

static int is_command_line(int argc, char **argv) {
    if (argc < 2) return 0;
    for (const char *const *word = command_line; *word; word++)
        if (strcmp(argv[1], *word) == 0) return 1;
    /* `sesame --service` becomes sesame-service: no GTK on the way. */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--service") == 0) return 1;
    return 0;
}

int main(int argc, char **argv) {
    if (!is_command_line(argc, argv)) {
        char window[PATH_MAX];
        ssize_t length = readlink("/proc/self/exe", window, sizeof window - 64);
        if (length > 0) {
            window[length] = '\0';
            char *slash = strrchr(window, '/');
            if (slash) {
                strcpy(slash + 1, "../libexec/sesame/sesame-window");
                execv(window, argv);
            }
        }
        /* No window program where it belongs: the command line says so, in its words. */
    }
    /* Found through this program's RUNPATH ($ORIGIN/../lib/sesame). */
    void *library = dlopen("libsesame.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!library) {
        fprintf(stderr, "sesame: %s; reinstall the sesame package.\n", dlerror());
        return 1;
    }
    int (*entry)(int, char **) = (int (*)(int, char **))dlsym(library, "sesame_main");
    if (!entry) {
        fprintf(stderr, "sesame: libsesame.so.0 has no sesame_main; reinstall the sesame package.\n");
        return 1;
    }
    return entry(argc, argv);
}
