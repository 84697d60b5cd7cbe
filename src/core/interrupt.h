/* interrupt.h — stopping a training run cleanly on SIGINT (Ctrl-C) or SIGTERM
 * (a job scheduler): the handler only records the signal; the training loop
 * reads it at a step boundary, saves what --resume needs, says how to
 * continue, and returns 128 + signal. A second signal acts at once (the
 * default action), so a run stuck in a save can still be stopped; the same
 * signal again within INTERRUPT_REPEAT_MS is the same request delivered
 * twice (timeout(1) sends it to the command and then to its process group)
 * and is ignored.
 *
 * The training loop of every run (fine-tuning, pretraining, translation)
 * reads it at its step boundaries; glue serve waits for it (interrupt_wait).
 * Whichever thread the kernel hands the signal to runs the handler, so a
 * library's own threads (OpenBLAS, OpenMP, the HTTP server's) need no
 * signal mask for the signal to be recorded rather than kill the process. */
#ifndef GLUE_INTERRUPT_H
#define GLUE_INTERRUPT_H

#define INTERRUPT_REPEAT_MS 1000

/* Installs the handlers (the previous ones are kept for interrupt_end). */
void interrupt_begin(void);
/* The signal received since interrupt_begin (SIGINT or SIGTERM), or 0. */
int interrupt_pending(void);
/* Blocks until SIGINT or SIGTERM arrives (after interrupt_begin); returns it. */
int interrupt_wait(void);
/* "interrupted (SIGINT)" / "terminated (SIGTERM)" for messages. */
const char *interrupt_name(int sig);
/* Restores the previous handlers and forgets a pending signal. */
void interrupt_end(void);

#endif
