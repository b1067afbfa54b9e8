/*
 * Every socket and epoll instance a Sesame program creates is close-on-exec.
 *
 * Why this file exists: the programs Sesame starts must hold nothing of Sesame's (a descriptor
 * inherited by a WebKit web process — which runs remote pages — could read or answer on it).
 * WebKit starts its web and network processes with GLib's launcher, which closes none of the
 * parent's descriptors and relies on each being close-on-exec; Sesame's own files, pipes and
 * inotify instance are (SesameSystem/Posix.swift, SesameGIO's channels), but SwiftNIO 2.101 opens
 * its sockets (`socket`, `accept`, `accept4`) and its epoll instances (`epoll_create`) without
 * SOCK_CLOEXEC / EPOLL_CLOEXEC, and AsyncHTTPClient gives no hook at which a socket could be
 * marked before another thread starts a process. So the executables define these four calls
 * themselves: the linker binds the program's own calls (NIO's among them) to these, which add
 * the flag atomically, in the same system call. Nothing else changes: the arguments, the result
 * and errno are the kernel's. (The release builds export no symbols, so the libraries the window
 * loads — GLib, WebKit — keep calling the C library's own, and already pass the flags.)
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "close_on_exec.h"

int socket(int domain, int type, int protocol) {
    return (int)syscall(SYS_socket, domain, type | SOCK_CLOEXEC, protocol);
}

int accept(int fd, struct sockaddr *address, socklen_t *length) {
    return (int)syscall(SYS_accept4, fd, address, length, SOCK_CLOEXEC);
}

int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
    return (int)syscall(SYS_accept4, fd, address, length, flags | SOCK_CLOEXEC);
}

int epoll_create(int size) {
    if (size <= 0) {
        /* epoll_create's own check, which epoll_create1 does not make. */
        return (int)syscall(SYS_epoll_create1, -1);
    }
    return (int)syscall(SYS_epoll_create1, EPOLL_CLOEXEC);
}
