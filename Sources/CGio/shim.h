// What Swift cannot import from GLib and GIO by itself, and nothing else: the type-cast macro,
// g_signal_connect's data form, and libdispatch's main-queue hooks for the GLib ↔ Swift
// main-actor bridge. Only Sources/SesameGIO/Interop imports this module; SesameGtk's CGtkWebKit
// includes this header, so both see one GLib.
#ifndef SESAME_GIO_SHIM_H
#define SESAME_GIO_SHIM_H

#include <gio/gio.h>
#include <glib-unix.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

// libdispatch's hooks for the main queue (what CoreFoundation's run loop uses): an eventfd that
// becomes readable when work is queued, and the call that drains the queue.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

// g_signal_connect is a macro over g_signal_connect_data.
static inline gulong sesame_signal_connect(gpointer instance, const char *signal, GCallback handler, gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(instance, signal, handler, data, destroy, (GConnectFlags)0);
}

// Whether the caller runs on the process's main thread (its thread id is the process id).
static inline int sesame_is_main_thread(void) { return getpid() == (pid_t)syscall(SYS_gettid); }

// Type-cast macros.
static inline GObject *sesame_object(gpointer object) { return G_OBJECT(object); }

#endif
