/* clock.c - LATCHD.CLOCK, latchd's clock on the wire for deterministic
 * expiry tests: GET, ADVANCE <ms>, FREEZE, RESUME (--enable-clock-control). */
#include "commands.h"

#define NS CMD_NOSCRIPT
#define L CMD_LOADING
#define S CMD_STALE
#define F CMD_FAST

/* The wheel spans 48 bits of milliseconds; stay well inside them. */
#define CLOCK_MAX_MS (UINT64_C(1) << 46)

static void clock_get(client *c) { reply_int(c, (long long)server_clock_ms(c->srv)); }

static void clock_advance(client *c)
{
    long long ms;
    if (!arg_ll_or_reply(c, &c->argv[2], &ms)) return;
    if (ms < 0) {
        reply_error(c, "ERR the clock only moves forward: milliseconds must be >= 0");
        return;
    }
    if ((uint64_t)ms > CLOCK_MAX_MS - server_clock_ms(c->srv)) {
        reply_error(c, "ERR milliseconds would move the clock past its range");
        return;
    }
    server_clock_advance(c->srv, (uint64_t)ms);
    reply_int(c, (long long)server_clock_ms(c->srv));
}

static void clock_freeze(client *c)
{
    server_clock_freeze(c->srv);
    reply_ok(c);
}

static void clock_resume(client *c)
{
    server_clock_resume(c->srv);
    reply_ok(c);
}

static void clock_help(client *c)
{
    static const char *const lines[] = {
        "GET",
        "    The server clock in unix milliseconds (what TTL, TIME and expiry use).",
        "ADVANCE <milliseconds>",
        "    Move the clock forward; keys that fall due expire at once. Returns the new time.",
        "FREEZE",
        "    Hold the clock still: nothing expires until ADVANCE or RESUME.",
        "RESUME",
        "    Let a frozen clock run again from where it stands.",
    };
    reply_help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

const command clock_subcommands[] = {
    {"get", clock_get, 2, NS | L | S | F, 0, 0, 0, "server", "0.1.0", "Return the server clock in milliseconds", NULL, NULL},
    {"advance", clock_advance, 3, NS | L | S, 0, 0, 0, "server", "0.1.0", "Move the server clock forward, expiring what falls due", "milliseconds", NULL},
    {"freeze", clock_freeze, 2, NS | L | S | F, 0, 0, 0, "server", "0.1.0", "Stop the server clock", NULL, NULL},
    {"resume", clock_resume, 2, NS | L | S | F, 0, 0, 0, "server", "0.1.0", "Let a frozen server clock run again", NULL, NULL},
    {"help", clock_help, 2, L | S, 0, 0, 0, "server", "0.1.0", "Show helpful text about the different subcommands", NULL, NULL},
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL},
};

void cmd_latchd_clock(client *c)
{
    if (!c->srv->cfg.enable_clock_control) {
        reply_error(c, "ERR LATCHD.CLOCK is disabled: start latchd with --enable-clock-control yes");
        return;
    }
    subcommand_dispatch(c);
}
