// What Swift cannot import from GTK 3 and WebKitGTK 4.1 by itself: the type-cast macros, the
// g_signal_connect macro, and libdispatch's main-queue hooks for the GLib ↔ Swift main-actor
// bridge. Everything else is called directly.
#ifndef SESAME_GTK_WEBKIT_SHIM_H
#define SESAME_GTK_WEBKIT_SHIM_H

#include <gtk/gtk.h>
#include <webkit2/webkit2.h>
#include <glib-unix.h>
#include <libintl.h>
#include <locale.h>
#include <stdint.h>
#include <unistd.h>

// libdispatch's hooks for the main queue (what CoreFoundation's run loop uses): an eventfd that
// becomes readable when work is queued, and the call that drains the queue.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

static inline gulong sesame_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

static inline GtkWidget *sesame_widget(gpointer object) { return GTK_WIDGET(object); }
static inline GtkContainer *sesame_container(gpointer object) { return GTK_CONTAINER(object); }
static inline GtkWindow *sesame_window(gpointer object) { return GTK_WINDOW(object); }
static inline GtkBox *sesame_box(gpointer object) { return GTK_BOX(object); }
static inline GtkLabel *sesame_label(gpointer object) { return GTK_LABEL(object); }
static inline GtkEntry *sesame_entry(gpointer object) { return GTK_ENTRY(object); }
static inline GtkStack *sesame_stack(gpointer object) { return GTK_STACK(object); }
static inline GtkHeaderBar *sesame_header_bar(gpointer object) { return GTK_HEADER_BAR(object); }
static inline GtkListBox *sesame_list_box(gpointer object) { return GTK_LIST_BOX(object); }
static inline GtkScrolledWindow *sesame_scrolled_window(gpointer object) { return GTK_SCROLLED_WINDOW(object); }
static inline GtkSpinner *sesame_spinner(gpointer object) { return GTK_SPINNER(object); }
static inline GtkPaned *sesame_paned(gpointer object) { return GTK_PANED(object); }
static inline GtkGrid *sesame_grid(gpointer object) { return GTK_GRID(object); }
static inline GtkTextView *sesame_text_view(gpointer object) { return GTK_TEXT_VIEW(object); }
static inline GtkStackSwitcher *sesame_stack_switcher(gpointer object) { return GTK_STACK_SWITCHER(object); }
static inline GtkApplication *sesame_application(gpointer object) { return GTK_APPLICATION(object); }
static inline GApplication *sesame_g_application(gpointer object) { return G_APPLICATION(object); }
static inline WebKitWebView *sesame_web_view(gpointer object) { return WEBKIT_WEB_VIEW(object); }
static inline WebKitNavigationPolicyDecision *sesame_navigation_decision(gpointer object) { return WEBKIT_NAVIGATION_POLICY_DECISION(object); }
static inline AtkObject *sesame_accessible(GtkWidget *widget) { return gtk_widget_get_accessible(widget); }

static inline GtkTreeView *sesame_tree_view(gpointer object) { return GTK_TREE_VIEW(object); }
static inline GtkTreeModel *sesame_tree_model(gpointer object) { return GTK_TREE_MODEL(object); }
static inline GType sesame_type_string(void) { return G_TYPE_STRING; }

// A list store of `columns` string columns, and a row appended with their values.
static inline GtkListStore *sesame_string_list_store_new(gint columns) {
    GType types[8];
    for (gint i = 0; i < columns && i < 8; i++) types[i] = G_TYPE_STRING;
    return gtk_list_store_newv(columns, types);
}

static inline void sesame_string_list_store_append(GtkListStore *store, const char *a, const char *b, const char *c) {
    GtkTreeIter iter;
    gtk_list_store_insert_with_values(store, &iter, -1, 0, a, 1, b, 2, c, -1);
}

static inline GtkTreePath *gtk_tree_path_new_from_indices_single(gint index) { return gtk_tree_path_new_from_indices(index, -1); }

// The index of the selected row, or -1.
static inline gint sesame_tree_selection_index(GtkTreeSelection *selection) {
    GtkTreeModel *model = NULL;
    GtkTreeIter iter;
    if (!gtk_tree_selection_get_selected(selection, &model, &iter)) return -1;
    GtkTreePath *path = gtk_tree_model_get_path(model, &iter);
    gint index = gtk_tree_path_get_indices(path)[0];
    gtk_tree_path_free(path);
    return index;
}

static inline GtkTreeViewColumn *sesame_text_column(const char *title, gint column, gboolean bold) {
    GtkCellRenderer *renderer = gtk_cell_renderer_text_new();
    if (bold) g_object_set(renderer, "weight", PANGO_WEIGHT_BOLD, NULL);
    g_object_set(renderer, "ellipsize", PANGO_ELLIPSIZE_END, NULL);
    GtkTreeViewColumn *result = gtk_tree_view_column_new_with_attributes(title, renderer, "text", column, NULL);
    gtk_tree_view_column_set_resizable(result, TRUE);
    gtk_tree_view_column_set_expand(result, TRUE);
    return result;
}

// A web view WebKitWebDriver may drive (the construct-only "is-controlled-by-automation").
static inline GtkWidget *sesame_web_view_new_for_automation(WebKitWebContext *context) {
    return GTK_WIDGET(g_object_new(WEBKIT_TYPE_WEB_VIEW, "web-context", context, "is-controlled-by-automation", TRUE, NULL));
}

// Tells WebDriver which browser this is: the WebKit version it was built with.
static inline void sesame_automation_session_set_info(WebKitAutomationSession *session, const char *name) {
    WebKitApplicationInfo *info = webkit_application_info_new();
    webkit_application_info_set_name(info, name);
    webkit_application_info_set_version(info, WEBKIT_MAJOR_VERSION, WEBKIT_MINOR_VERSION, WEBKIT_MICRO_VERSION);
    webkit_automation_session_set_application_info(session, info);
    webkit_application_info_unref(info);
}

// WebKit objects whose constructors are varargs in C.
static inline WebKitWebsiteDataManager *sesame_website_data_manager_new(const char *data_directory, const char *cache_directory) {
    return webkit_website_data_manager_new("base-data-directory", data_directory, "base-cache-directory", cache_directory, NULL);
}

static inline GtkApplication *sesame_application_new(const char *id) {
    return gtk_application_new(id, G_APPLICATION_NON_UNIQUE);
}

#endif
