/* lua_struct.c - the `struct` library Redis 7.0 gives scripts (struct.pack,
 * struct.unpack, struct.size), matching redis-server 7.0.15 on x86-64 byte for byte. */
#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

int latchd_luaopen_struct(lua_State *L);

#define INT_SIZE_LIMIT 32   /* widest i/I option Redis accepts */

/* "!" without a number aligns to the strictest scalar type, as Redis does. */
struct align_probe {
    char c;
    union { double d; void *p; lua_Integer i; lua_Number n; } u;
};
#define MAX_ALIGN ((int)offsetof(struct align_probe, u))

/* Half-way between FLT_MAX and the next power of two: the point from which
 * an IEEE double -> float conversion rounds to infinity. */
#define FLT_OVERFLOW_EDGE 0x1.ffffffp+127

typedef struct {
    int big;        /* byte order of integers and floats: 1 big endian */
    size_t align;   /* largest alignment ("!n"); 1 packs without padding */
} fmt_state;

static int native_big_endian(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 0;
}

static fmt_state default_state(void)
{
    fmt_state st = {native_big_endian(), 1};
    return st;
}

/* Bits to value without the implementation-defined unsigned -> signed cast. */
static int64_t u64_as_i64(uint64_t v)
{
    return v <= INT64_MAX ? (int64_t)v : -(int64_t)~v - 1;
}

/* Redis casts the number straight to an unsigned 64-bit integer; on x86-64
 * that gives 2^63 for NaN and for negatives below -2^63, and 0 from 2^64 up
 * (and wraps negatives). Reproduce those results without the undefined cast. */
static uint64_t x86_double_to_u64(double n)
{
    const double two63 = 9223372036854775808.0;
    if (isnan(n) || n < -two63) return UINT64_C(1) << 63;
    if (n < two63) return (uint64_t)(int64_t)n;
    if (n < 2 * two63) return (uint64_t)n;
    return 0;
}

/* double -> float rounded as IEEE 754 does, minus C's undefined behaviour
 * for values beyond the float range. */
static float double_to_float(double d)
{
    if (!isfinite(d) || fabs(d) <= FLT_MAX) return (float)d;
    if (fabs(d) < FLT_OVERFLOW_EDGE) return d < 0 ? -FLT_MAX : FLT_MAX;
    return d < 0 ? -INFINITY : INFINITY;
}

/* The digits after an option ("i8", "c10", "!4"), or dflt if there are none. */
static int read_count(lua_State *L, const char **fmt, int dflt)
{
    if (!isdigit((unsigned char)**fmt)) return dflt;
    int n = 0;
    do {
        int digit = *(*fmt)++ - '0';
        if (n > INT_MAX / 10 || n * 10 > INT_MAX - digit)
            luaL_error(L, "integral size overflow");
        n = n * 10 + digit;
    } while (isdigit((unsigned char)**fmt));
    return n;
}

/* Bytes an option occupies; 0 for "s", "c0" and the control options. */
static size_t option_size(lua_State *L, int opt, const char **fmt)
{
    switch (opt) {
    case 'b': case 'B': return sizeof(char);
    case 'h': case 'H': return sizeof(short);
    case 'l': case 'L': return sizeof(long);
    case 'T': return sizeof(size_t);
    case 'f': return sizeof(float);
    case 'd': return sizeof(double);
    case 'x': return 1;
    case 'c': return (size_t)read_count(L, fmt, 1);
    case 'i': case 'I': {
        int n = read_count(L, fmt, (int)sizeof(int));
        if (n > INT_SIZE_LIMIT)
            luaL_error(L, "integral size %d is larger than limit of %d", n, INT_SIZE_LIMIT);
        return (size_t)n;
    }
    default: return 0;
    }
}

/* Padding that aligns offset pos for an option: to the smaller of its size
 * and the "!" limit. Sizes that are not powers of two (i3, i6) go through
 * the same mask arithmetic, which is what Redis does with them. */
static size_t padding(size_t pos, const fmt_state *st, int opt, size_t size)
{
    if (size == 0 || opt == 'c') return 0;
    if (size > st->align) size = st->align;
    return (size - (pos & (size - 1))) & (size - 1);
}

/* Options that change the state instead of producing data. */
static void control_option(lua_State *L, int opt, const char **fmt, fmt_state *st)
{
    switch (opt) {
    case ' ': return;
    case '>': st->big = 1; return;
    case '<': st->big = 0; return;
    case '!': {
        int a = read_count(L, fmt, MAX_ALIGN);
        if (a <= 0 || (a & (a - 1)) != 0)
            luaL_error(L, "alignment %d is not a power of 2", a);
        st->align = (size_t)a;
        return;
    }
    default:
        luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
    }
}

/* Floats are handled as native bytes; reversing them when the requested
 * order differs works on hosts of either endianness. */
static void order_bytes(unsigned char *dst, const unsigned char *src, size_t size, int big)
{
    int swap = big != native_big_endian();
    for (size_t i = 0; i < size; i++) dst[i] = src[swap ? size - 1 - i : i];
}

/* Integers wider than 8 bytes get the value's low 8 bytes and zeros above,
 * even when negative: Redis's 64-bit value runs out of bits. */
static void pack_integer(lua_State *L, luaL_Buffer *b, int arg, const fmt_state *st, size_t size)
{
    uint64_t v = x86_double_to_u64(luaL_checknumber(L, arg));
    unsigned char bytes[INT_SIZE_LIMIT];
    for (size_t i = 0; i < size; i++) {
        bytes[st->big ? size - 1 - i : i] = (unsigned char)(v & 0xff);
        v >>= 8;
    }
    luaL_addlstring(b, (const char *)bytes, size);
}

/* "f" and "d": the IEEE bytes of the number, in the requested order. */
static void pack_float(lua_State *L, luaL_Buffer *b, int arg, const fmt_state *st, int opt)
{
    lua_Number n = luaL_checknumber(L, arg);
    unsigned char native[sizeof(double)], out[sizeof(double)];
    size_t size;
    if (opt == 'f') {
        float f = double_to_float(n);
        size = sizeof f;
        memcpy(native, &f, size);
    } else {
        double d = n;
        size = sizeof d;
        memcpy(native, &d, size);
    }
    order_bytes(out, native, size, st->big);
    luaL_addlstring(b, (const char *)out, size);
}

/* "c" and "s". Returns the bytes written, which "c0" and "s" decide. */
static size_t pack_string(lua_State *L, luaL_Buffer *b, int *arg, int opt, size_t size)
{
    size_t len;
    const char *s = luaL_checklstring(L, (*arg)++, &len);
    if (size == 0) size = len;
    /* Redis names the argument after the string here; so do we. */
    luaL_argcheck(L, len >= size, *arg, "string too short");
    luaL_addlstring(b, s, size);
    if (opt == 's') {
        luaL_addchar(b, '\0');
        size++;
    }
    return size;
}

static int struct_pack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    fmt_state st = default_state();
    int arg = 2;
    size_t total = 0;
    luaL_Buffer b;
    /* Parks a nil just past the arguments, before the buffer's pieces, so a
     * missing argument reads "got nil" as in Redis. */
    lua_pushnil(L);
    luaL_buffinit(L, &b);
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = option_size(L, opt, &fmt);
        size_t pad = padding(total, &st, opt, size);
        total += pad;
        for (; pad > 0; pad--) luaL_addchar(&b, '\0');
        switch (opt) {
        case 'b': case 'B': case 'h': case 'H': case 'l': case 'L':
        case 'T': case 'i': case 'I':
            pack_integer(L, &b, arg++, &st, size);
            break;
        case 'x': luaL_addchar(&b, '\0'); break;
        case 'f': case 'd': pack_float(L, &b, arg++, &st, opt); break;
        case 'c': case 's': size = pack_string(L, &b, &arg, opt, size); break;
        default: control_option(L, opt, &fmt, &st);
        }
        total += size;
    }
    luaL_pushresult(&b);
    return 1;
}

/* Reads size bytes as an integer. Only the last 8 bytes read are kept, as
 * in Redis's 64-bit value, and the sign bit is bit (size*8-1) mod 64: Redis
 * shifts by size*8-1, which x86 reduces mod 64, so i9..i32 decode as there. */
static lua_Number unpack_integer(const unsigned char *p, const fmt_state *st, int is_signed,
                                 size_t size)
{
    uint64_t v = 0;
    for (size_t i = 0; i < size; i++)
        v = (v & UINT64_C(0x00ffffffffffffff)) << 8 | p[st->big ? i : size - 1 - i];
    if (!is_signed) return (lua_Number)v;
    unsigned sign_bit = ((unsigned)size * 8u + 63u) & 63u;
    uint64_t mask = ~((UINT64_C(1) << sign_bit) - 1);   /* the sign bit and all above */
    if (v & mask) v |= mask;
    return (lua_Number)u64_as_i64(v);
}

static lua_Number unpack_float(const unsigned char *p, const fmt_state *st, int opt)
{
    unsigned char native[sizeof(double)];
    if (opt == 'f') {
        float f;
        order_bytes(native, p, sizeof f, st->big);
        memcpy(&f, native, sizeof f);
        return f;
    }
    double d;
    order_bytes(native, p, sizeof d, st->big);
    memcpy(&d, native, sizeof d);
    return d;
}

/* "c0" takes its length from the value unpacked just before it, which it
 * consumes. Returns the length; the caller pushes the string. */
static size_t previous_size(lua_State *L, int *nvalues, size_t pos, size_t len)
{
    if (*nvalues == 0 || !lua_isnumber(L, -1))
        luaL_error(L, "format 'c0' needs a previous size");
    size_t size = x86_double_to_u64(lua_tonumber(L, -1));
    lua_pop(L, 1);
    (*nvalues)--;
    luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
    return size;
}

typedef struct {
    const char *data;
    size_t len;
    size_t pos;      /* 0-based; may have wrapped if the caller gave a negative start */
    int nvalues;     /* values pushed so far */
} unpack_cursor;

/* Unpacks one option at cur->pos (already aligned and bounds-checked for
 * its fixed size) and returns the bytes it used. */
static size_t unpack_option(lua_State *L, int opt, const char **fmt, fmt_state *st,
                            unpack_cursor *cur, size_t size)
{
    const unsigned char *p = (const unsigned char *)cur->data + cur->pos;
    switch (opt) {
    case 'b': case 'B': case 'h': case 'H': case 'l': case 'L':
    case 'T': case 'i': case 'I':
        lua_pushnumber(L, unpack_integer(p, st, islower(opt), size));
        break;
    case 'x': return size;
    case 'f': case 'd': lua_pushnumber(L, unpack_float(p, st, opt)); break;
    case 'c':
        if (size == 0) size = previous_size(L, &cur->nvalues, cur->pos, cur->len);
        lua_pushlstring(L, (const char *)p, size);
        break;
    case 's': {
        const unsigned char *end = memchr(p, '\0', cur->len - cur->pos);
        if (end == NULL) luaL_error(L, "unfinished string in data");
        size = (size_t)(end - p) + 1;
        lua_pushlstring(L, (const char *)p, size - 1);
        break;
    }
    default:
        control_option(L, opt, fmt, st);
        return size;
    }
    cur->nvalues++;
    return size;
}

static int struct_unpack(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    unpack_cursor cur = {NULL, 0, 0, 0};
    cur.data = luaL_checklstring(L, 2, &cur.len);
    /* As in Redis, only 0 is refused: a negative start wraps to a huge
     * offset that fails the bounds checks (and shows in the returned position). */
    cur.pos = (size_t)luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, cur.pos > 0, 3, "offset must be 1 or greater");
    cur.pos--;
    fmt_state st = default_state();
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = option_size(L, opt, &fmt);
        cur.pos += padding(cur.pos, &st, opt, size);
        luaL_argcheck(L, size <= cur.len && cur.pos <= cur.len - size, 2, "data string too short");
        /* room for this value and the final position */
        luaL_checkstack(L, 2, "too many results");
        cur.pos += unpack_option(L, opt, &fmt, &st, &cur, size);
    }
    lua_pushinteger(L, (lua_Integer)u64_as_i64((uint64_t)cur.pos + 1));
    return cur.nvalues + 1;
}

static int struct_size(lua_State *L)
{
    const char *fmt = luaL_checkstring(L, 1);
    fmt_state st = default_state();
    size_t pos = 0;
    while (*fmt) {
        int opt = (unsigned char)*fmt++;
        size_t size = option_size(L, opt, &fmt);
        pos += padding(pos, &st, opt, size);
        if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
        if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
        /* Redis skips letters and digits it does not know here, unlike pack. */
        if (!isalnum(opt)) control_option(L, opt, &fmt, &st);
        pos += size;
    }
    lua_pushinteger(L, (lua_Integer)u64_as_i64(pos));
    return 1;
}

int latchd_luaopen_struct(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", struct_pack},
        {"unpack", struct_unpack},
        {"size", struct_size},
        {NULL, NULL},
    };
    lua_createtable(L, 0, 3);
    luaL_register(L, NULL, fns);
    return 1;
}
