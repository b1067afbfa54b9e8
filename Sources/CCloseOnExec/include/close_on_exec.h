#ifndef SESAME_CLOSE_ON_EXEC_H
#define SESAME_CLOSE_ON_EXEC_H

/* Every socket and epoll instance a Sesame program creates is close-on-exec: close_on_exec.c
   defines the C library's socket, accept, accept4 and epoll_create for the programs that link
   it (through SesameSystem), with the flag added. Nothing to call: linking is enough. */

#endif
