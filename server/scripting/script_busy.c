/* script_busy.c - other clients while a script runs past
 * busy-reply-threshold: their input is read and answered -BUSY (SCRIPT
 * KILL and SHUTDOWN NOSAVE still work), from inside the script's Lua hook,
 * because the libuv loop that would normally serve them cannot be entered
 * again from one of its own callbacks. */
#include <poll.h>
#include <string.h>

#include "mem.h"
#include "script.h"

int script_busy_refuses(client *c, const command *cmd)
{
    scripts *st = c->srv->scripts;
    if (!st->busy || (c->flags & CLIENT_DETACHED)) return 0;
    const command *eff = cmd;
    if ((cmd->flags & CMD_CONTAINER) && c->argc > 1)
        eff = subcommand_lookup(cmd, c->argv[1].ptr, c->argv[1].len);
    if (eff && (eff->flags & CMD_ALLOW_BUSY)) return 0;
    if (st->running->fn)
        reply_error(c, "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.");
    else
        reply_error(c, "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    return 1;
}

static size_t add_fd(scripts *st, size_t n, uv_os_fd_t fd, client *c, uv_stream_t *listener)
{
    if (n == st->pcap) {
        st->pcap = st->pcap ? st->pcap * 2 : 64;
        st->pfds = mem_realloc(st->pfds, st->pcap * sizeof(*st->pfds));
        st->pclients = mem_realloc(st->pclients, st->pcap * sizeof(*st->pclients));
        st->plisteners = mem_realloc(st->plisteners, st->pcap * sizeof(*st->plisteners));
    }
    st->pfds[n] = (struct pollfd){.fd = fd, .events = POLLIN};
    st->pclients[n] = c;
    st->plisteners[n] = listener;
    return n + 1;
}

/* Every connection but the script's own caller, whose input is mid-way
 * through the dispatch loop that called the script, and the listeners:
 * Redis accepts new clients during a busy script, and a new redis-cli is
 * how most people send SCRIPT KILL. */
static size_t collect(server *s, const client *caller)
{
    size_t n = 0;
    uv_os_fd_t fd;
    for (client *c = s->clients; c; c = c->next) {
        if (c == caller || (c->flags & (CLIENT_CLOSING | CLIENT_CLOSE_AFTER_REPLY))) continue;
        if (uv_fileno(&c->h.handle, &fd) == 0) n = add_fd(s->scripts, n, fd, c, NULL);
    }
    for (int i = 0; i < s->nlisteners; i++)
        if (uv_fileno((uv_handle_t *)s->listeners[i], &fd) == 0)
            n = add_fd(s->scripts, n, fd, NULL, (uv_stream_t *)s->listeners[i]);
    for (int i = 0; i < s->ntls_listeners; i++)
        if (uv_fileno((uv_handle_t *)s->tls_listeners[i], &fd) == 0)
            n = add_fd(s->scripts, n, fd, NULL, (uv_stream_t *)s->tls_listeners[i]);
    if (s->has_unix && uv_fileno((uv_handle_t *)&s->unix_listener, &fd) == 0)
        n = add_fd(s->scripts, n, fd, NULL, (uv_stream_t *)&s->unix_listener);
    return n;
}

int script_busy_tick(server *s)
{
    scripts *st = s->scripts;
    if (!st->busy) {
        if (s->cfg.busy_reply_ms <= 0 ||
            server_real_ms(s) - st->busy_since_ms < (uint64_t)s->cfg.busy_reply_ms)
            return 0;
        st->busy = 1;
        log_msg(s, LOG_WARNING, "Slow script detected: still in execution after %llu milliseconds. "
                             "You can try killing the script using the SCRIPT KILL command. Script name is: %s.",
                (unsigned long long)(server_real_ms(s) - st->busy_since_ms), script_call_name(st->running));
    }
    size_t n = collect(s, st->running->c);
    int ready = n ? poll(st->pfds, n, 0) : 0;
    for (size_t i = 0; ready > 0 && i < n; i++) {
        if (!(st->pfds[i].revents & POLLIN)) continue;
        if (st->pclients[i]) net_read_now(st->pclients[i]);
        else while (net_accept_now(st->plisteners[i])) {}
    }
    /* What others were answered, now and in the loop iteration the script
     * started in, goes out (the AOF first, as after any iteration): a
     * client may wait for it before it sends SCRIPT KILL. */
    net_flush_pending_except(s, st->running->c);
    return st->kill;
}

void script_kill_reply(client *c, int from_eval)
{
    scripts *st = c->srv->scripts;
    if (!st->running) {
        reply_error(c, "NOTBUSY No scripts in execution right now.");
    } else if (st->wrote) {
        reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the dataset. "
                       "You can either wait the script termination or kill the server in a hard way "
                       "using the SHUTDOWN NOSAVE command.");
    } else if (from_eval && st->running->fn) {
        reply_error(c, "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.");
    } else if (!from_eval && !st->running->fn) {
        reply_error(c, "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    } else {
        st->kill = 1;
        reply_ok(c);
    }
}
