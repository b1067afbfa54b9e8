#ifndef SESAME_CLOSE_ON_EXEC_H
#define SESAME_CLOSE_ON_EXEC_H

/* Every socket and epoll instance a Sesame program creates is close-on-exec: see close_on_exec.c. */

/* The flags close_on_exec.c adds, so that a test can see that they are in force: 1 when a new
   socket made by this program (through the C library's `socket`) is close-on-exec. */
int sesame_sockets_close_on_exec(void);

#endif
