/* script_nolua.c - the script engine of a build without Lua
 * (-DLATCHD_LUA=OFF): only native lock scripts run; the rest are refused. */
#include <stdio.h>
#include <stdlib.h>

#include "mem.h"
#include "script.h"

struct script_engine {
    int unused;
};

script_engine *script_engine_new(server *s) { return mem_calloc(1, sizeof(script_engine)); }
void script_engine_free(script_engine *e) { free(e); }
/* No VM, no memory: 0 rather than the ~32 KiB of an empty Lua state a
 * build with Lua (and Redis) would show. */
size_t script_engine_memory(script_engine *e) { return 0; }
void script_engine_collect(script_engine *e) {}

/* Bodies are cached unchecked: a native script still runs by its SHA1. */
int script_engine_compile(script_engine *e, script *sc, char *err, size_t errlen) { return 0; }
void script_engine_forget(script_engine *e, script *sc) {}

void script_engine_run(script_engine *e, const script_call *call)
{
    if (call->fn)
        reply_errorf(call->c, "ERR This latchd was built without Lua: function %s cannot run", call->fn->name);
    else if (call->sc->native)
        reply_errorf(call->c, "NOSCRIPT This latchd was built without Lua: script %s runs natively, "
                              "but this call needs Lua (unusual arguments or data)", call->sc->sha);
    else
        reply_errorf(call->c, "NOSCRIPT This latchd was built without Lua and has no native "
                              "implementation of script %s", call->sc->sha);
}

void script_engine_forget_function(script_engine *e, function *fn) {}

int script_engine_load_library(script_engine *e, function_lib *lib, const char *code,
                               size_t len, char *err, size_t errlen)
{
    snprintf(err, errlen, "This latchd was built without Lua: functions need Lua");
    return -1;
}
