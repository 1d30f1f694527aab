/* embed.h - latchd.h's latchd_server as server/ sees it: a server, the loop
 * and thread it runs on, and the queue that hands calls onto that loop. */
#ifndef LATCHD_EMBED_H
#define LATCHD_EMBED_H

#include <pthread.h>

#include "latchd.h"
#include "server.h"

/* Work to do on the server's loop: fn runs there and sets st. */
typedef struct embed_call embed_call;
struct embed_call {
    void (*fn)(latchd_server *srv, embed_call *call);
    latchd_status st;
    int done;
    embed_call *next;
};

struct latchd_server {
    latchd_config cfg;          /* until latchd_start hands it to s */
    server s;
    int started;
    int load_failed;            /* latchd_start: the dump file did not load (logged) */
    int threaded;
    uv_loop_t own_loop;         /* latchd_start_thread's loop */
    pthread_t thread;
    uv_async_t wake;            /* stop requests and queued calls */
    pthread_mutex_t mu;         /* guards the fields below */
    pthread_cond_t done_cv;
    int accepting;              /* wake may be sent: not shut down yet */
    int stop_requested;
    embed_call *calls;          /* queued by other threads, newest first */
    resp_buf scratch;           /* a lock's derived key or channel name (loop thread) */
};

/* Run call->fn on the server's loop: at once when the caller is on it (or
 * the server runs on the caller's loop), else queued there and waited for.
 * LATCHD_ERR_STATE if the server is not running. */
latchd_status embed_run(latchd_server *srv, embed_call *call);

#endif
