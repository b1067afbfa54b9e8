/* The baseline of `make bench`'s figures that end with rows on screen: the plain work and the
 * frame it must wait for, by a bare GTK program. A window of Sesame's size with a GtkTreeView of
 * the Directory's three columns (name, mail, user name); libsoup asks the emulator what the app
 * asks it, json-glib reads the answer, the rows go into a GtkListStore, and the time is taken at
 * the frame clock's `after-paint` of the frame that shows them — as Sesame's `list-rendered`.
 *
 *     bare-rows BASE
 *
 * It prints "ready" once its window has painted its first frame, then reads commands on stdin,
 * one a line, and answers each with one JSON line on stdout:
 *   redeem CODE   the code's redemption (POST /contoso.onmicrosoft.com/oauth2/v2.0/token), then
 *                 the Directory's first page (GET /v1.0/users?$select=…&$top=50) with its token;
 *   search TEXT   the Directory's search for TEXT with that token (the same filter and page).
 * {"ms": from the command read to the rows painted, "answered": to the last answer in hand,
 *  "began" and "laid_out": to the start of the frame that paints them and the end of its layout,
 *  "rows": rows in the table}.
 */
#include <gtk/gtk.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>
#include <stdio.h>
#include <string.h>

#define CLIENT_ID "6731de76-14a6-49ae-97bc-6eba6914391e"
#define REDIRECT "https://login.microsoftonline.com/common/oauth2/nativeclient"
#define SELECT "id,displayName,givenName,surname,userPrincipalName,mail,businessPhones,mobilePhone"

static const char *base;
static SoupSession *session;
static GtkWidget *tree;
static GtkListStore *store;
static char *access_token;
static gint64 began, answered, frame_began, frame_laid_out;
static gulong paint_handler, began_handler, layout_handler;

static double since_began(gint64 now) { return (now - began) / 1000.0; }

static void fail(const char *what) {
    fprintf(stderr, "bare-rows: %s\n", what);
    exit(1);
}

/* The frame's phases, as Sesame's `rows-frame-began` and `rows-frame-laid-out`. */
static void frame_begins(GdkFrameClock *clock, gpointer data) {
    (void)clock, (void)data;
    frame_began = g_get_monotonic_time();
}

static void frame_layout_done(GdkFrameClock *clock, gpointer data) {
    (void)clock, (void)data;
    frame_laid_out = g_get_monotonic_time();
}

static void painted(GdkFrameClock *clock, gpointer data) {
    (void)data;
    g_signal_handler_disconnect(clock, paint_handler);
    g_signal_handler_disconnect(clock, began_handler);
    g_signal_handler_disconnect(clock, layout_handler);
    paint_handler = began_handler = layout_handler = 0;
    int rows = gtk_tree_model_iter_n_children(GTK_TREE_MODEL(store), NULL);
    printf("{\"ms\": %.3f, \"answered\": %.3f, \"began\": %.3f, \"laid_out\": %.3f, \"rows\": %d}\n",
           since_began(g_get_monotonic_time()), since_began(answered), since_began(frame_began), since_began(frame_laid_out),
           rows);
    fflush(stdout);
}

static const char *member(JsonObject *object, const char *name) {
    JsonNode *node = json_object_get_member(object, name);
    return node && JSON_NODE_HOLDS_VALUE(node) ? json_node_get_string(node) : NULL;
}

static JsonObject *parse(GBytes *body, JsonParser *parser) {
    gsize size;
    const char *bytes = g_bytes_get_data(body, &size);
    if (!json_parser_load_from_data(parser, bytes, (gssize)size, NULL)) fail("an answer is not JSON");
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) fail("an answer is not a JSON object");
    return json_node_get_object(root);
}

/* The Graph page in hand: its people into the table, then the time of the frame that shows them. */
static void page_answered(GObject *source, GAsyncResult *result, gpointer data) {
    (void)data;
    GError *error = NULL;
    GBytes *body = soup_session_send_and_read_finish(SOUP_SESSION(source), result, &error);
    if (!body) fail(error->message);
    answered = g_get_monotonic_time();
    JsonParser *parser = json_parser_new();
    JsonArray *people = json_object_get_array_member(parse(body, parser), "value");
    gtk_list_store_clear(store);
    for (guint i = 0; people && i < json_array_get_length(people); i++) {
        JsonObject *person = json_array_get_object_element(people, i);
        const char *name = member(person, "displayName"), *mail = member(person, "mail"),
                   *user = member(person, "userPrincipalName");
        gtk_list_store_insert_with_values(store, NULL, -1, 0, name ? name : (user ? user : "?"), 1, mail ? mail : "no mail", 2,
                                          user ? user : "", -1);
    }
    g_object_unref(parser);
    g_bytes_unref(body);
    GdkFrameClock *clock = gtk_widget_get_frame_clock(tree);
    began_handler = g_signal_connect(clock, "before-paint", G_CALLBACK(frame_begins), NULL);
    layout_handler = g_signal_connect_after(clock, "layout", G_CALLBACK(frame_layout_done), NULL);
    paint_handler = g_signal_connect(clock, "after-paint", G_CALLBACK(painted), NULL);
    gtk_widget_queue_draw(tree);
}

static void ask_for_page(const char *filter) {
    char *select = g_uri_escape_string(SELECT, NULL, FALSE);
    char *url;
    if (filter) {
        char *escaped = g_uri_escape_string(filter, NULL, FALSE);
        url = g_strdup_printf("%s/v1.0/users?$filter=%s&$select=%s&$top=50", base, escaped, select);
        g_free(escaped);
    } else {
        url = g_strdup_printf("%s/v1.0/users?$select=%s&$top=50", base, select);
    }
    SoupMessage *message = soup_message_new("GET", url);
    if (!message) fail("a URL libsoup does not take");
    char *authorization = g_strdup_printf("Bearer %s", access_token);
    soup_message_headers_replace(soup_message_get_request_headers(message), "Authorization", authorization);
    soup_session_send_and_read_async(session, message, G_PRIORITY_DEFAULT, NULL, page_answered, NULL);
    g_object_unref(message);
    g_free(authorization);
    g_free(url);
    g_free(select);
}

static void token_answered(GObject *source, GAsyncResult *result, gpointer data) {
    (void)data;
    GError *error = NULL;
    GBytes *body = soup_session_send_and_read_finish(SOUP_SESSION(source), result, &error);
    if (!body) fail(error->message);
    JsonParser *parser = json_parser_new();
    const char *token = member(parse(body, parser), "access_token");
    if (!token) fail("the code's redemption gave no access token");
    g_free(access_token);
    access_token = g_strdup(token);
    g_object_unref(parser);
    g_bytes_unref(body);
    ask_for_page(NULL);
}

static void redeem(const char *code) {
    char *url = g_strdup_printf("%s/contoso.onmicrosoft.com/oauth2/v2.0/token", base);
    char *form = soup_form_encode("client_id", CLIENT_ID, "grant_type", "authorization_code", "code", code, "redirect_uri",
                                  REDIRECT, "scope", "openid offline_access User.Read User.ReadBasic.All", NULL);
    SoupMessage *message = soup_message_new("POST", url);
    GBytes *bytes = g_bytes_new_take(form, strlen(form));
    soup_message_set_request_body_from_bytes(message, "application/x-www-form-urlencoded", bytes);
    soup_session_send_and_read_async(session, message, G_PRIORITY_DEFAULT, NULL, token_answered, NULL);
    g_bytes_unref(bytes);
    g_object_unref(message);
    g_free(url);
}

static void search(const char *text) {
    GString *literal = g_string_new("'");
    for (const char *c = text; *c; c++) {
        if (*c == '\'') g_string_append_c(literal, '\'');
        g_string_append_c(literal, *c);
    }
    g_string_append_c(literal, '\'');
    static const char *fields[] = {"displayName", "givenName", "surname", "mail", "userPrincipalName"};
    GString *filter = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
        g_string_append_printf(filter, "%sstartswith(%s,%s)", i ? " or " : "", fields[i], literal->str);
    ask_for_page(filter->str);
    g_string_free(filter, TRUE);
    g_string_free(literal, TRUE);
}

static gboolean command(GIOChannel *channel, GIOCondition condition, gpointer data) {
    (void)condition;
    (void)data;
    char *line = NULL;
    gsize length = 0;
    GIOStatus status = g_io_channel_read_line(channel, &line, &length, NULL, NULL);
    if (status == G_IO_STATUS_EOF) {
        gtk_main_quit();
        return G_SOURCE_REMOVE;
    }
    if (status != G_IO_STATUS_NORMAL || !line) return G_SOURCE_CONTINUE;
    began = g_get_monotonic_time();
    g_strchomp(line);
    if (g_str_has_prefix(line, "redeem "))
        redeem(line + 7);
    else if (g_str_has_prefix(line, "search ") && access_token)
        search(line + 7);
    else
        fail("a command other than `redeem CODE` or `search TEXT` (after a redemption)");
    g_free(line);
    return G_SOURCE_CONTINUE;
}

static void first_frame(GdkFrameClock *clock, gpointer data) {
    (void)data;
    g_signal_handler_disconnect(clock, paint_handler);
    paint_handler = 0;
    puts("ready");
    fflush(stdout);
    GIOChannel *input = g_io_channel_unix_new(0);
    g_io_add_watch(input, G_IO_IN | G_IO_HUP, command, NULL);
}

static void mapped(GtkWidget *widget, gpointer data) {
    (void)data;
    paint_handler = g_signal_connect(gtk_widget_get_frame_clock(widget), "after-paint", G_CALLBACK(first_frame), NULL);
    gtk_widget_queue_draw(widget);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bare-rows BASE\n");
        return 64;
    }
    base = argv[1];
    gtk_init(&argc, &argv);
    session = soup_session_new();
    store = gtk_list_store_new(3, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING);
    tree = gtk_tree_view_new_with_model(GTK_TREE_MODEL(store));
    const char *titles[] = {"Name", "Mail", "User name"};
    for (int i = 0; i < 3; i++)
        gtk_tree_view_append_column(GTK_TREE_VIEW(tree), gtk_tree_view_column_new_with_attributes(
                                                             titles[i], gtk_cell_renderer_text_new(), "text", i, NULL));
    GtkWidget *scrolled = gtk_scrolled_window_new(NULL, NULL);
    gtk_container_add(GTK_CONTAINER(scrolled), tree);
    GtkWidget *window = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
    gtk_container_add(GTK_CONTAINER(window), scrolled);
    g_signal_connect(window, "destroy", G_CALLBACK(gtk_main_quit), NULL);
    g_signal_connect_after(tree, "map", G_CALLBACK(mapped), NULL);
    gtk_widget_show_all(window);
    gtk_main();
    return 0;
}
