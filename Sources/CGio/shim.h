// What Swift cannot import from GLib and GIO by itself, and nothing else: the type-cast macro,
// g_signal_connect's data form, libdispatch's main-queue hooks for the GLib ↔ Swift main-actor
// bridge, and the socket control messages (CMSG_* are macros) of the service's channel to its
// window. Only Sources/SesameGIO/Interop imports this module; SesameGtk's CGtkWebKit
// includes this header, so both see one GLib.
#ifndef SESAME_GIO_SHIM_H
#define SESAME_GIO_SHIM_H

#include <gio/gio.h>
#include <glib-unix.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
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

// Reads what a Unix socket holds (SO_PASSCRED set on it) and the process id the kernel attached
// to it (SCM_CREDENTIALS, 0x02 in Linux's <bits/socket.h>, named only under _GNU_SOURCE; its data
// is `struct ucred`, whose first field is the pid): the sender as the kernel knows it, which a
// process cannot forge. The kernel never merges two senders' bytes into one read. Returns
// recvmsg's result; *sender is 0 when no credentials came.
static inline ssize_t sesame_receive_with_sender(int fd, void *buffer, size_t length, pid_t *sender) {
    struct iovec vector = { buffer, length };
    union { struct cmsghdr header; char space[CMSG_SPACE(3 * sizeof(int))]; } control;
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_iov = &vector;
    message.msg_iovlen = 1;
    message.msg_control = control.space;
    message.msg_controllen = sizeof control.space;
    *sender = 0;
    ssize_t count = recvmsg(fd, &message, 0);
    if (count < 0) return count;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == 0x02 && header->cmsg_len >= CMSG_LEN(3 * sizeof(int))) {
            int credentials[3];
            memcpy(credentials, CMSG_DATA(header), sizeof credentials);
            *sender = credentials[0];
        }
    }
    return count;
}

// A connected pair of Unix stream sockets, both close-on-exec, each passing its sender's
// credentials (SO_PASSCRED, 16 in Linux's <asm-generic/socket.h>) with what it sends.
static inline int sesame_credential_socket_pair(int pair[2]) {
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
    int on = 1;
    if (setsockopt(pair[0], SOL_SOCKET, 16, &on, sizeof on) != 0 || setsockopt(pair[1], SOL_SOCKET, 16, &on, sizeof on) != 0) {
        close(pair[0]);
        close(pair[1]);
        return -1;
    }
    return 0;
}

// Type-cast macros.
static inline GObject *sesame_object(gpointer object) { return G_OBJECT(object); }

#endif
