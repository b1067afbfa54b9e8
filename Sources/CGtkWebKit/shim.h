// What Swift cannot import from GTK 3 and WebKitGTK 4.1 by itself, and nothing else: the
// type-cast macros, macro constants, wrappers of variadic functions (g_object_new, g_object_set,
// gtk_tree_model_get, …), GTK's frame freeze (deprecated for applications), and glibc's
// malloc_trim (malloc.h). GLib and GIO's own come from CGio's shim, included first, so both
// modules see one GLib. Only Sources/SesameGtk/Interop imports this module.
#ifndef SESAME_GTK_WEBKIT_SHIM_H
#define SESAME_GTK_WEBKIT_SHIM_H

#include "../CGio/shim.h"
#include <gtk/gtk.h>
#include <malloc.h>
#include <webkit2/webkit2.h>
#include <cairo-svg.h>
#include <glib-unix.h>
#include <stdint.h>
#include <unistd.h>

/* Holds a toplevel's frames: GDK's frame clock frozen, nothing laid out or painted until the
 * thaw, which paints all that changed in one frame. GTK 3's own means (GtkWindow freezes its
 * toplevel so while a resize is pending); deprecated for applications in 3.16 with no
 * replacement in GTK 3, hence this wrapper. */
static inline void sesame_window_freeze_frames(GdkWindow *window) {
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gdk_window_freeze_toplevel_updates_libgtk_only(window);
    G_GNUC_END_IGNORE_DEPRECATIONS
}
static inline void sesame_window_thaw_frames(GdkWindow *window) {
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gdk_window_thaw_toplevel_updates_libgtk_only(window);
    G_GNUC_END_IGNORE_DEPRECATIONS
}

// Type-cast macros.
static inline GTypeInstance *sesame_type_instance(gpointer object) { return (GTypeInstance *)object; }
static inline GtkWidget *sesame_widget(gpointer object) { return GTK_WIDGET(object); }
static inline GtkContainer *sesame_container(gpointer object) { return GTK_CONTAINER(object); }
static inline GtkWindow *sesame_window(gpointer object) { return GTK_WINDOW(object); }
static inline GtkBox *sesame_box(gpointer object) { return GTK_BOX(object); }
static inline GtkButton *sesame_button(gpointer object) { return GTK_BUTTON(object); }
static inline GtkBin *sesame_bin(gpointer object) { return GTK_BIN(object); }
static inline GtkMenuButton *sesame_menu_button(gpointer object) { return GTK_MENU_BUTTON(object); }
static inline GtkLabel *sesame_label(gpointer object) { return GTK_LABEL(object); }
static inline GtkImage *sesame_image(gpointer object) { return GTK_IMAGE(object); }
static inline GtkEntry *sesame_entry(gpointer object) { return GTK_ENTRY(object); }
static inline GtkStack *sesame_stack(gpointer object) { return GTK_STACK(object); }
static inline GtkHeaderBar *sesame_header_bar(gpointer object) { return GTK_HEADER_BAR(object); }
static inline GtkScrolledWindow *sesame_scrolled_window(gpointer object) { return GTK_SCROLLED_WINDOW(object); }
static inline GtkSpinner *sesame_spinner(gpointer object) { return GTK_SPINNER(object); }
static inline GtkPaned *sesame_paned(gpointer object) { return GTK_PANED(object); }
static inline GtkGrid *sesame_grid(gpointer object) { return GTK_GRID(object); }
static inline GtkAdjustment *sesame_adjustment(gpointer object) { return GTK_ADJUSTMENT(object); }
static inline GtkFileChooser *sesame_file_chooser(gpointer object) { return GTK_FILE_CHOOSER(object); }
static inline GtkNativeDialog *sesame_native_dialog(gpointer object) { return GTK_NATIVE_DIALOG(object); }
static inline GtkTextView *sesame_text_view(gpointer object) { return GTK_TEXT_VIEW(object); }
static inline GtkStackSwitcher *sesame_stack_switcher(gpointer object) { return GTK_STACK_SWITCHER(object); }
static inline GtkAboutDialog *sesame_about_dialog(gpointer object) { return GTK_ABOUT_DIALOG(object); }
static inline GtkBuilder *sesame_builder(gpointer object) { return GTK_BUILDER(object); }
static inline void sesame_stack_set_child_position(GtkStack *stack, GtkWidget *child, gint position) {
    gtk_container_child_set(GTK_CONTAINER(stack), child, "position", position, NULL);
}
static inline GtkTreeView *sesame_tree_view(gpointer object) { return GTK_TREE_VIEW(object); }
static inline GtkTreeModel *sesame_tree_model(gpointer object) { return GTK_TREE_MODEL(object); }
static inline GtkApplication *sesame_application(gpointer object) { return GTK_APPLICATION(object); }
static inline GApplication *sesame_g_application(gpointer object) { return G_APPLICATION(object); }
static inline WebKitWebView *sesame_web_view(gpointer object) { return WEBKIT_WEB_VIEW(object); }
static inline WebKitResponsePolicyDecision *sesame_response_decision(gpointer object) { return WEBKIT_RESPONSE_POLICY_DECISION(object); }
static inline WebKitNavigationPolicyDecision *sesame_navigation_decision(gpointer object) { return WEBKIT_NAVIGATION_POLICY_DECISION(object); }
static inline WebKitAutomationSession *sesame_automation_session(gpointer object) { return WEBKIT_AUTOMATION_SESSION(object); }

// G_TYPE_STRING is a macro.
static inline GType sesame_type_string(void) { return G_TYPE_STRING; }

// A row of three strings and its tooltip, the three escaped as markup, one a line, in column 3
// (gtk_list_store_insert_with_values is variadic).
static inline void sesame_string_list_store_append(GtkListStore *store, const char *a, const char *b, const char *c) {
    GtkTreeIter iter;
    gchar *escaped[3] = {g_markup_escape_text(a, -1), g_markup_escape_text(b, -1), g_markup_escape_text(c, -1)};
    gchar *tooltip = g_strjoin("\n", escaped[0], escaped[1], escaped[2], NULL);
    gtk_list_store_insert_with_values(store, &iter, -1, 0, a, 1, b, 2, c, 3, tooltip, -1);
    g_free(tooltip);
    for (int i = 0; i < 3; i++) g_free(escaped[i]);
}

// One string cell (gtk_tree_model_get is variadic); the caller frees it with g_free.
static inline void sesame_tree_model_get_string(GtkTreeModel *model, GtkTreeIter *iter, gint column, gchar **value) {
    gtk_tree_model_get(model, iter, column, value, -1);
}

// A path to one top-level row (gtk_tree_path_new_from_indices is variadic).
static inline GtkTreePath *sesame_tree_path_new_from_index(gint index) { return gtk_tree_path_new_from_indices(index, -1); }

// A text column showing model column `column` through `renderer`
// (gtk_tree_view_column_new_with_attributes is variadic).
static inline GtkTreeViewColumn *sesame_text_column_new(const char *title, GtkCellRenderer *renderer, gint column) {
    return gtk_tree_view_column_new_with_attributes(title, renderer, "text", column, NULL);
}

// A text renderer that ellipsizes, in bold when asked (g_object_set is variadic).
static inline GtkCellRenderer *sesame_text_renderer_new(gboolean bold) {
    GtkCellRenderer *renderer = gtk_cell_renderer_text_new();
    if (bold) g_object_set(renderer, "weight", PANGO_WEIGHT_BOLD, NULL);
    g_object_set(renderer, "ellipsize", PANGO_ELLIPSIZE_END, NULL);
    return renderer;
}

// A web view WebKitWebDriver may drive: "is-controlled-by-automation" is construct-only
// (g_object_new is variadic).
static inline GtkWidget *sesame_web_view_new_for_automation(WebKitWebContext *context) {
    return GTK_WIDGET(g_object_new(WEBKIT_TYPE_WEB_VIEW, "web-context", context, "is-controlled-by-automation", TRUE, NULL));
}

// A website data manager with its directories (webkit_website_data_manager_new is variadic).
static inline WebKitWebsiteDataManager *sesame_website_data_manager_new(const char *data_directory, const char *cache_directory) {
    return webkit_website_data_manager_new("base-data-directory", data_directory, "base-cache-directory", cache_directory, NULL);
}

// The dark variant of the theme, as GTK_THEME=Adwaita:dark gives it (g_object_set is variadic).
static inline void sesame_settings_prefer_dark_theme(gboolean dark) {
    g_object_set(gtk_settings_get_default(), "gtk-application-prefer-dark-theme", dark, NULL);
}

// A popover's menu item (GtkModelButton's "text" and "role" are set through g_object_set, which
// is variadic); a check item when `check`.
static inline GtkWidget *sesame_model_button_new(const char *text, gboolean check) {
    GtkWidget *button = gtk_model_button_new();
    g_object_set(button, "text", text, NULL);
    if (check) g_object_set(button, "role", GTK_BUTTON_ROLE_CHECK, NULL);
    return button;
}

static inline void sesame_model_button_set_active(GtkWidget *button, gboolean active) {
    g_object_set(button, "active", active, NULL);
}

static inline void sesame_model_button_set_text(GtkWidget *button, const char *text) {
    g_object_set(button, "text", text, NULL);
}

static inline GtkOrientable *sesame_orientable(gpointer object) { return GTK_ORIENTABLE(object); }

// WEBKIT_*_VERSION are macros.
static inline guint sesame_webkit_major_version(void) { return WEBKIT_MAJOR_VERSION; }
static inline guint sesame_webkit_minor_version(void) { return WEBKIT_MINOR_VERSION; }
static inline guint sesame_webkit_micro_version(void) { return WEBKIT_MICRO_VERSION; }

#endif
