/* The baseline of `make bench`'s sign-in page figure: a bare GTK window with one WebKitWebView,
 * set up as Sesame's sign-in view is (its own context with persistent web data in DATA_DIR,
 * hardware acceleration off, developer extras off), loading URL. It appends to TRACE_FILE, as
 * Sesame's --trace-events does, {"t":SECONDS,"event":"window-shown"} once its window is shown and
 * {"t":SECONDS,"event":"page-loaded"} when the page has loaded (seconds since main began), and
 * keeps running until it is terminated. DATA_DIR `-` makes it the minimal program instead: an
 * ephemeral context (web data in memory only, nothing opened on disk).
 *
 *     bare-webview URL DATA_DIR|- TRACE_FILE
 */
#include <gtk/gtk.h>
#include <stdio.h>
#include <string.h>
#include <webkit2/webkit2.h>

static const char *trace_path;
static gint64 began;

static void record(const char *event) {
    FILE *trace = fopen(trace_path, "a");
    if (!trace) return;
    fprintf(trace, "{\"t\":%.3f,\"event\":\"%s\"}\n", (g_get_monotonic_time() - began) / 1e6, event);
    fclose(trace);
}

static gboolean decide_policy(WebKitWebView *view, WebKitPolicyDecision *decision, WebKitPolicyDecisionType type, gpointer data) {
    (void)view;
    (void)decision;
    (void)data;
    if (type == WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION) record("navigation");
    return FALSE;
}

static void load_changed(WebKitWebView *view, WebKitLoadEvent event, gpointer data) {
    (void)view;
    (void)data;
    if (event == WEBKIT_LOAD_FINISHED) record("page-loaded");
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: bare-webview URL DATA_DIR|- TRACE_FILE\n");
        return 64;
    }
    trace_path = argv[3];
    began = g_get_monotonic_time();
    gtk_init(&argc, &argv);
    char *cache = NULL, *cookies = NULL;
    WebKitWebContext *context;
    if (strcmp(argv[2], "-") == 0) {
        context = webkit_web_context_new_ephemeral();
    } else {
        cache = g_build_filename(argv[2], "cache", NULL);
        WebKitWebsiteDataManager *manager =
            webkit_website_data_manager_new("base-data-directory", argv[2], "base-cache-directory", cache, NULL);
        context = webkit_web_context_new_with_website_data_manager(manager);
        cookies = g_build_filename(argv[2], "cookies.sqlite", NULL);
        webkit_cookie_manager_set_persistent_storage(webkit_web_context_get_cookie_manager(context), cookies,
                                                     WEBKIT_COOKIE_PERSISTENT_STORAGE_SQLITE);
    }
    GtkWidget *view = webkit_web_view_new_with_context(context);
    WebKitSettings *settings = webkit_web_view_get_settings(WEBKIT_WEB_VIEW(view));
    webkit_settings_set_hardware_acceleration_policy(settings, WEBKIT_HARDWARE_ACCELERATION_POLICY_NEVER);
    webkit_settings_set_enable_developer_extras(settings, FALSE);
    g_signal_connect(view, "load-changed", G_CALLBACK(load_changed), NULL);
    g_signal_connect(view, "decide-policy", G_CALLBACK(decide_policy), NULL);
    GtkWidget *window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    gtk_window_set_default_size(GTK_WINDOW(window), 1240, 720);
    gtk_container_add(GTK_CONTAINER(window), view);
    g_signal_connect(window, "destroy", G_CALLBACK(gtk_main_quit), NULL);
    gtk_widget_show_all(window);
    record("window-shown");
    webkit_web_view_load_uri(WEBKIT_WEB_VIEW(view), argv[1]);
    record("sign-in-page-requested");
    gtk_main();
    g_free(cookies);
    g_free(cache);
    return 0;
}
