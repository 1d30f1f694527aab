/* lua_cmsgpack.c - the `cmsgpack` library Redis 7.0 gives scripts (MessagePack
 * pack/unpack), matching redis-server 7.0.15's bytes, limits and error texts. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

int latchd_luaopen_cmsgpack(lua_State *L);

#define MAX_NESTING 16        /* deeper tables are packed as nil, as in Redis */
#define KEEP_BUFFER 16384     /* encode buffer kept between calls */

/* ------------------------------------------------------------ encoding */

/* The encode buffer lives in a userdata that is an upvalue of pack, so an
 * error thrown halfway (a stack limit) leaks nothing, and it takes no slot
 * on the Lua stack: stack-limit errors then strike exactly where Redis's do. */
typedef struct {
    unsigned char *data;
    size_t len, cap;
    lua_Alloc alloc;
    void *alloc_ud;
} mp_buf;

static void buf_release(mp_buf *b)
{
    if (b->data) b->alloc(b->alloc_ud, b->data, b->cap, 0);
    b->data = NULL;
    b->len = b->cap = 0;
}

static int buf_gc(lua_State *L)
{
    buf_release(lua_touserdata(L, 1));
    return 0;
}

static unsigned char *buf_room(lua_State *L, mp_buf *b, size_t n)
{
    if (b->cap - b->len < n) {
        if (n > SIZE_MAX / 2 - b->len) luaL_error(L, "not enough memory");
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        /* Lua's allocator, so the memory counts as the script engine's */
        unsigned char *p = b->alloc(b->alloc_ud, b->data, b->cap, cap);
        if (!p) luaL_error(L, "not enough memory");
        b->data = p;
        b->cap = cap;
    }
    unsigned char *at = b->data + b->len;
    b->len += n;
    return at;
}

/* A type byte followed by v as a big-endian integer of nbytes bytes. */
static void put_head(lua_State *L, mp_buf *b, unsigned char type, uint64_t v, size_t nbytes)
{
    unsigned char *p = buf_room(L, b, 1 + nbytes);
    p[0] = type;
    for (size_t i = nbytes; i > 0; i--, v >>= 8) p[i] = (unsigned char)(v & 0xff);
}

/* The smallest MessagePack integer that holds v. */
static void put_integer(lua_State *L, mp_buf *b, int64_t v)
{
    if (v >= 0) {
        uint64_t u = (uint64_t)v;
        if (u <= 0x7f) put_head(L, b, (unsigned char)u, 0, 0);
        else if (u <= 0xff) put_head(L, b, 0xcc, u, 1);
        else if (u <= 0xffff) put_head(L, b, 0xcd, u, 2);
        else if (u <= 0xffffffff) put_head(L, b, 0xce, u, 4);
        else put_head(L, b, 0xcf, u, 8);
        return;
    }
    uint64_t bits = (uint64_t)v;   /* two's complement, as MessagePack stores it */
    if (v >= -32) put_head(L, b, (unsigned char)(bits & 0xff), 0, 0);
    else if (v >= INT8_MIN) put_head(L, b, 0xd0, bits, 1);
    else if (v >= INT16_MIN) put_head(L, b, 0xd1, bits, 2);
    else if (v >= INT32_MIN) put_head(L, b, 0xd2, bits, 4);
    else put_head(L, b, 0xd3, bits, 8);
}

/* Redis sends whole numbers in int64 range as integers, then any value a
 * float holds exactly as float32, the rest as float64. */
static void put_number(lua_State *L, mp_buf *b, lua_Number n)
{
    const double two63 = 9223372036854775808.0;
    if (n >= -two63 && n < two63 && n == floor(n)) {
        put_integer(L, b, (int64_t)n);
        return;
    }
    /* NaN and doubles beyond the float range are never exact as floats;
     * testing first also keeps the conversion below defined. */
    if (!isnan(n) && !(isfinite(n) && fabs(n) > FLT_MAX) && (double)(float)n == n) {
        float f = (float)n;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        put_head(L, b, 0xca, bits, 4);
        return;
    }
    uint64_t bits;
    double d = n;
    memcpy(&bits, &d, sizeof bits);
    put_head(L, b, 0xcb, bits, 8);
}

/* str8 too, which MessagePack's older spec lacked: Redis sends it. */
static void put_string(lua_State *L, mp_buf *b)
{
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (len < 32) put_head(L, b, (unsigned char)(0xa0 | len), 0, 0);
    else if (len <= 0xff) put_head(L, b, 0xd9, len, 1);
    else if (len <= 0xffff) put_head(L, b, 0xda, len, 2);
    else if (len <= 0xffffffff) put_head(L, b, 0xdb, len, 4);
    else luaL_error(L, "string too long for MessagePack");
    memcpy(buf_room(L, b, len), s, len);
}

/* Array or map header; the 32-bit form's type byte follows the 16-bit one. */
static void put_container(lua_State *L, mp_buf *b, unsigned char fix, unsigned char type16,
                          size_t n)
{
    if (n <= 15) put_head(L, b, (unsigned char)(fix | n), 0, 0);
    else if (n <= 0xffff) put_head(L, b, type16, n, 2);
    else put_head(L, b, (unsigned char)(type16 + 1), n, 4);
}

/* A table is an array when its keys are exactly 1..n. The stack checks in
 * this file use Redis's sizes and texts so limits are hit at the same depth. */
static int table_is_array(lua_State *L)
{
    const double two63 = 9223372036854775808.0;
    int top = lua_gettop(L);
    lua_Number max = 0, count = 0;
    luaL_checkstack(L, 2, "in function table_is_an_array");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_Number k = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || k < 1 || k >= two63 || k != floor(k)) {
            lua_settop(L, top);
            return 0;
        }
        count++;
        if (k > max) max = k;
    }
    return max == count;
}

static void encode_value(lua_State *L, mp_buf *b, int level);

static void encode_array(lua_State *L, mp_buf *b, int level)
{
    size_t n = lua_objlen(L, -1);
    put_container(L, b, 0x90, 0xdc, n);
    luaL_checkstack(L, 1, "in function mp_encode_lua_table_as_array");
    for (size_t i = 1; i <= n; i++) {
        lua_pushnumber(L, (lua_Number)i);
        lua_rawget(L, -2);
        encode_value(L, b, level + 1);
    }
}

/* Keys come in lua_next order, which is also the order Redis sends them. */
static void encode_map(lua_State *L, mp_buf *b, int level)
{
    size_t n = 0;
    luaL_checkstack(L, 3, "in function mp_encode_lua_table_as_map");
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    put_container(L, b, 0x80, 0xde, n);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);   /* lua_next needs the key back untouched */
        encode_value(L, b, level + 1);
        encode_value(L, b, level + 1);
    }
}

/* Encodes the value on top of the stack and pops it. */
static void encode_value(lua_State *L, mp_buf *b, int level)
{
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: put_string(L, b); break;
    case LUA_TBOOLEAN: put_head(L, b, lua_toboolean(L, -1) ? 0xc3 : 0xc2, 0, 0); break;
    case LUA_TNUMBER: put_number(L, b, lua_tonumber(L, -1)); break;
    case LUA_TTABLE:
        /* the depth cap also stops reference cycles */
        if (level == MAX_NESTING) put_head(L, b, 0xc0, 0, 0);
        else if (table_is_array(L)) encode_array(L, b, level);
        else encode_map(L, b, level);
        break;
    default: put_head(L, b, 0xc0, 0, 0); break;   /* nil, functions, coroutines... */
    }
    lua_pop(L, 1);
}

/* Each argument becomes one MessagePack object; they are concatenated. */
static int mp_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    mp_buf *b = lua_touserdata(L, lua_upvalueindex(1));
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, nargs))
        return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    for (int i = 1; i <= nargs; i++) {
        b->len = 0;
        lua_pushvalue(L, i);
        encode_value(L, b, 0);
        lua_pushlstring(L, (const char *)b->data, b->len);
    }
    if (b->cap > KEEP_BUFFER) buf_release(b);
    lua_concat(L, nargs);
    return 1;
}

/* ------------------------------------------------------------ decoding */

enum { MP_OK, MP_EOF, MP_BADFMT };

typedef struct {
    const unsigned char *p;
    size_t left;
    int err;
} mp_cur;

static int need(mp_cur *c, size_t n)
{
    if (c->left >= n) return 1;
    c->err = MP_EOF;
    return 0;
}

static void skip(mp_cur *c, size_t n)
{
    c->p += n;
    c->left -= n;
}

/* The big-endian unsigned integer of n bytes after the type byte. */
static uint64_t read_be(const mp_cur *c, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 1; i <= n; i++) v = (v << 8) | c->p[i];
    return v;
}

/* Two's complement bits of a width-bit integer to its value. */
static lua_Number signed_value(uint64_t v, unsigned width)
{
    if (width < 64 && (v >> (width - 1)) & 1) v |= ~UINT64_C(0) << width;
    return (lua_Number)(v <= INT64_MAX ? (int64_t)v : -(int64_t)~v - 1);
}

static void decode_value(lua_State *L, mp_cur *c);

/* A fixed-size scalar of n bytes after the type byte; returns its bits, or
 * sets the EOF error. */
static int read_scalar(mp_cur *c, size_t n, uint64_t *v)
{
    if (!need(c, 1 + n)) return 0;
    *v = read_be(c, n);
    skip(c, 1 + n);
    return 1;
}

static void decode_float(lua_State *L, mp_cur *c, int is_double)
{
    uint64_t v;
    if (!read_scalar(c, is_double ? 8 : 4, &v)) return;
    if (is_double) {
        double d;
        memcpy(&d, &v, sizeof d);
        lua_pushnumber(L, d);
    } else {
        uint32_t bits = (uint32_t)v;
        float f;
        memcpy(&f, &bits, sizeof f);
        lua_pushnumber(L, f);
    }
}

static void decode_uint(lua_State *L, mp_cur *c, size_t n)
{
    uint64_t v;
    /* uint64 goes through int64 in Redis: 2^64-1 comes back as -1 */
    if (read_scalar(c, n, &v)) lua_pushnumber(L, n == 8 ? signed_value(v, 64) : (lua_Number)v);
}

static void decode_int(lua_State *L, mp_cur *c, size_t n)
{
    uint64_t v;
    if (read_scalar(c, n, &v)) lua_pushnumber(L, signed_value(v, (unsigned)n * 8));
}

/* A string whose length fills the hl-1 bytes after the type byte (none
 * for fixstr, whose length is len). */
static void decode_string(lua_State *L, mp_cur *c, size_t hl, size_t len)
{
    if (!need(c, hl)) return;
    if (hl > 1) len = read_be(c, hl - 1);
    if (!need(c, hl + len)) return;
    lua_pushlstring(L, (const char *)c->p + hl, len);
    skip(c, hl + len);
}

/* Elements and pairs are stored one by one into a fresh table, as Redis
 * does, so tables come out with the same layout (and # and pairs agree). */
static void decode_array(lua_State *L, mp_cur *c, uint64_t n)
{
    lua_newtable(L);
    luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
    for (uint64_t i = 1; i <= n; i++) {
        lua_pushnumber(L, (lua_Number)i);
        decode_value(L, c);
        if (c->err) return;
        lua_rawset(L, -3);
    }
}

/* A nil or NaN key raises Lua's own "table index is nil/NaN", as in Redis. */
static void decode_map(lua_State *L, mp_cur *c, uint64_t n)
{
    lua_newtable(L);
    for (uint64_t i = 0; i < n; i++) {
        decode_value(L, c);
        if (c->err) return;
        decode_value(L, c);
        if (c->err) return;
        lua_rawset(L, -3);
    }
}

/* array16/32 and map16/32: the count fills hl-1 bytes after the type byte. */
static void decode_container(lua_State *L, mp_cur *c, size_t hl, int is_map)
{
    uint64_t n;
    if (!read_scalar(c, hl - 1, &n)) return;
    if (is_map) decode_map(L, c, n);
    else decode_array(L, c, n);
}

/* Type bytes 0xc0-0xdf. bin, ext and 0xc1 are refused, as Redis refuses them. */
static void decode_tagged(lua_State *L, mp_cur *c, unsigned char t)
{
    switch (t) {
    case 0xc0: lua_pushnil(L); skip(c, 1); break;
    case 0xc2: lua_pushboolean(L, 0); skip(c, 1); break;
    case 0xc3: lua_pushboolean(L, 1); skip(c, 1); break;
    case 0xca: decode_float(L, c, 0); break;
    case 0xcb: decode_float(L, c, 1); break;
    case 0xcc: decode_uint(L, c, 1); break;
    case 0xcd: decode_uint(L, c, 2); break;
    case 0xce: decode_uint(L, c, 4); break;
    case 0xcf: decode_uint(L, c, 8); break;
    case 0xd0: decode_int(L, c, 1); break;
    case 0xd1: decode_int(L, c, 2); break;
    case 0xd2: decode_int(L, c, 4); break;
    case 0xd3: decode_int(L, c, 8); break;
    case 0xd9: decode_string(L, c, 2, 0); break;
    case 0xda: decode_string(L, c, 3, 0); break;
    case 0xdb: decode_string(L, c, 5, 0); break;
    case 0xdc: decode_container(L, c, 3, 0); break;
    case 0xdd: decode_container(L, c, 5, 0); break;
    case 0xde: decode_container(L, c, 3, 1); break;
    case 0xdf: decode_container(L, c, 5, 1); break;
    default: c->err = MP_BADFMT; break;
    }
}

/* Decodes one object and pushes it, or sets c->err. */
static void decode_value(lua_State *L, mp_cur *c)
{
    if (!need(c, 1)) return;
    luaL_checkstack(L, 1, "too many return values at once; "
                          "use unpack_one or unpack_limit instead.");
    unsigned char t = c->p[0];
    if (t <= 0x7f) {
        lua_pushnumber(L, t);
        skip(c, 1);
    } else if (t >= 0xe0) {
        lua_pushnumber(L, (int)t - 256);
        skip(c, 1);
    } else if (t <= 0x8f) {
        skip(c, 1);
        decode_map(L, c, t & 0x0f);
    } else if (t <= 0x9f) {
        skip(c, 1);
        decode_array(L, c, t & 0x0f);
    } else if (t <= 0xbf) {
        decode_string(L, c, 1, t & 0x1f);
    } else {
        decode_tagged(L, c, t);
    }
}

/* Redis formats these 64-bit values with %d, so only their low 32 bits, as
 * a signed int, show in its messages; reproduced without the varargs bug. */
static int low32(uint64_t v)
{
    v &= 0xffffffffu;
    return v > INT_MAX ? (int)((int64_t)v - 4294967296) : (int)v;
}

/* limit 0 with offset 0 decodes everything and returns just the values;
 * otherwise the next offset (or -1 at the end) comes first. */
static int unpack_values(lua_State *L, lua_Integer limit, lua_Integer offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int all = limit == 0 && offset == 0;
    if (offset < 0 || limit < 0)   /* Redis prints the length as the limit */
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                          low32((uint64_t)offset), low32(len));
    if ((uint64_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.",
                          low32((uint64_t)offset), low32(len));
    mp_cur c = {(const unsigned char *)s + offset, len - (size_t)offset, MP_OK};
    int count = 0;
    for (; c.left > 0 && (all || count < limit); count++) {
        decode_value(L, &c);
        if (c.err == MP_EOF) return luaL_error(L, "Missing bytes in input.");
        if (c.err == MP_BADFMT) return luaL_error(L, "Bad data format in input.");
    }
    if (all) return count;
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
    lua_insert(L, 2);
    return count + 1;
}

static int mp_unpack(lua_State *L)
{
    return unpack_values(L, 0, 0);
}

/* Extra arguments are dropped, but a missing string still reads "no value". */
static void keep_first_arg(lua_State *L)
{
    if (lua_gettop(L) > 1) lua_settop(L, 1);
}

static int mp_unpack_one(lua_State *L)
{
    lua_Integer offset = luaL_optinteger(L, 2, 0);
    keep_first_arg(L);
    return unpack_values(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    lua_Integer limit = luaL_checkinteger(L, 2);
    lua_Integer offset = luaL_optinteger(L, 3, 0);
    keep_first_arg(L);
    return unpack_values(L, limit, offset);
}

/* ------------------------------------------------------------ module */

static void push_pack(lua_State *L)
{
    mp_buf *b = lua_newuserdata(L, sizeof(*b));
    memset(b, 0, sizeof(*b));
    b->alloc = lua_getallocf(L, &b->alloc_ud);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, buf_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_pushcclosure(L, mp_pack, 1);
}

/* Fields in Redis's order, so pairs() walks the table the same way; the
 * metadata strings are the values Redis scripts read from these fields. */
int latchd_luaopen_cmsgpack(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"unpack", mp_unpack},
        {"unpack_one", mp_unpack_one},
        {"unpack_limit", mp_unpack_limit},
        {NULL, NULL},
    };
    lua_newtable(L);
    push_pack(L);
    lua_setfield(L, -2, "pack");
    for (const luaL_Reg *f = fns; f->name; f++) {
        lua_pushcfunction(L, f->func);
        lua_setfield(L, -2, f->name);
    }
    lua_pushliteral(L, "cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    lua_pushliteral(L, "MessagePack C implementation for Lua");
    lua_setfield(L, -2, "_DESCRIPTION");
    return 1;
}
