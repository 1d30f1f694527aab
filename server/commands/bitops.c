/* bitops.c - bitmap commands on string values: SETBIT GETBIT BITCOUNT
 * BITPOS BITOP BITFIELD BITFIELD_RO, bit 0 being the first byte's MSB. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"
#include "num.h"

static const char bad_offset[] = "ERR bit offset is not an integer or out of range";

/* Redis's getBitOffsetFromArgument: a bit offset whose byte is below
 * proto-max-bulk-len; with `bits` > 0 a "#n" offset counts fields of
 * that width. */
static int bit_offset_or_reply(client *c, const resp_slice *a, int bits, uint64_t *out)
{
    int hash = bits > 0 && a->len > 0 && a->ptr[0] == '#';
    long long v;
    if (!store_str2ll(a->ptr + hash, a->len - (size_t)hash, &v) || v < 0 ||
        (hash && v > LLONG_MAX / bits))
        goto bad;
    if (hash) v *= bits;
    if ((v >> 3) >= config_max_bulk(&c->srv->cfg)) goto bad;
    *out = (uint64_t)v;
    return 1;
bad:
    reply_error(c, bad_offset);
    return 0;
}

/* Redis's lookupStringForBitCommand: argv[1]'s string made at least
 * maxbit + 1 bits long (created if missing), or NULL after WRONGTYPE.
 * *grown: it was created or lengthened. */
static char *bits_for_write(client *c, uint64_t maxbit, size_t *len, int *grown)
{
    const resp_slice *key = &c->argv[1];
    store *db = client_db(c);
    store_key *k = db_lookup_write(c, key);
    size_t before = 0;
    if (!db_check_type(c, k, STORE_STRING)) return NULL;
    /* Offsets stop below proto-max-bulk-len, but a BITFIELD field starting
     * at the last one may reach up to 8 bytes past it: past what the
     * store holds if proto-max-bulk-len is set that high. */
    if ((maxbit >> 3) >= STORE_MAX_LEN) {
        reply_error(c, "ERR string exceeds maximum allowed size (proto-max-bulk-len)");
        return NULL;
    }
    if (k)
        store_string_get(k, &before);
    else
        k = store_create_key(db, key->ptr, key->len, STORE_STRING);
    char *p = store_string_writable(db, k, (size_t)(maxbit >> 3) + 1, len);
    *grown = *len != before;   /* made, or lengthened */
    return p;
}

void cmd_setbit(client *c)
{
    uint64_t off;
    long long on;
    size_t len;
    int grown;
    if (!bit_offset_or_reply(c, &c->argv[2], 0, &off)) return;
    if (!store_str2ll(c->argv[3].ptr, c->argv[3].len, &on) || (on & ~1LL)) {
        reply_error(c, "ERR bit is not an integer or out of range");
        return;
    }
    unsigned char *p = (unsigned char *)bits_for_write(c, off, &len, &grown);
    if (!p) return;
    unsigned bit = 7 - (unsigned)(off & 7);
    int old = (p[off >> 3] >> bit) & 1;
    if (grown || old != on) {
        p[off >> 3] = (unsigned char)((p[off >> 3] & ~(1u << bit)) | (unsigned)on << bit);
        db_notify(c, STORE_EV_STRING, "setbit", &c->argv[1]);
    }
    reply_int(c, old);
}

void cmd_getbit(client *c)
{
    uint64_t off;
    store_key *k;
    size_t len = 0;
    int v = 0;
    if (!bit_offset_or_reply(c, &c->argv[2], 0, &off)) return;
    if (!db_read_typed(c, &c->argv[1], STORE_STRING, &k)) return;
    const unsigned char *p = k ? (const unsigned char *)store_string_get(k, &len) : NULL;
    if (p && (off >> 3) < len) v = (p[off >> 3] >> (7 - (off & 7))) & 1;
    reply_int(c, v);
}

static long long popcount(const unsigned char *p, size_t n)
{
    long long count = 0;
    uint64_t w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        count += __builtin_popcountll(w);
    }
    while (n--) count += __builtin_popcount(*p++);
    return count;
}

/* First position of `bit` in n bytes; none: -1 for a 1, n * 8 for a 0
 * (the bit right after: the string is taken as padded with zeros). */
static long long first_bit(const unsigned char *p, size_t n, int bit)
{
    unsigned char skip = bit ? 0 : 0xff;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == skip) continue;
        for (int b = 7; b >= 0; b--)
            if (((p[i] >> b) & 1) == bit) return (long long)i * 8 + (7 - b);
    }
    return bit ? -1 : (long long)n * 8;
}

/* A range's BYTE|BIT unit argument: 1 for BIT, 0 for BYTE, -1 after a
 * syntax error. */
static int range_unit(client *c, const resp_slice *a)
{
    if (arg_is(a, "bit")) return 1;
    if (arg_is(a, "byte")) return 0;
    reply_syntax_error(c);
    return -1;
}

/* A [start, end] range over len bytes (or len * 8 bits), clamped as
 * Redis does; in bits the edge masks say which bits of the first and
 * last byte are outside it, and start/end become bytes. */
typedef struct bit_range {
    long long start, end;
    unsigned char first_out, last_out;
} bit_range;

static void clamp_range(bit_range *r, long long len, int isbit)
{
    long long total = isbit ? len << 3 : len;
    if (r->start < 0) r->start += total;
    if (r->end < 0) r->end += total;
    if (r->start < 0) r->start = 0;
    if (r->end < 0) r->end = 0;
    if (r->end >= total) r->end = total - 1;
    if (isbit && r->start <= r->end) {
        r->first_out = (unsigned char)(~((1u << (8 - (r->start & 7))) - 1) & 0xff);
        r->last_out = (unsigned char)((1u << (7 - (r->end & 7))) - 1);
        r->start >>= 3;
        r->end >>= 3;
    }
}

/* Redis looks the key up before parsing the range: a missing key is 0
 * whatever follows. */
void cmd_bitcount(client *c)
{
    store_key *k = db_lookup_read(c, &c->argv[1]);
    bit_range r = {0};
    size_t len;
    int isbit = 0;
    if (!k) {
        reply_int(c, 0);
        return;
    }
    if (!db_check_type(c, k, STORE_STRING)) return;
    const unsigned char *p = (const unsigned char *)store_string_get(k, &len);
    if (c->argc == 4 || c->argc == 5) {
        if (!arg_ll_or_reply(c, &c->argv[2], &r.start) || !arg_ll_or_reply(c, &c->argv[3], &r.end)) return;
        if (r.start < 0 && r.end < 0 && r.start > r.end) {
            reply_int(c, 0);
            return;
        }
        if (c->argc == 5 && (isbit = range_unit(c, &c->argv[4])) < 0) return;
        clamp_range(&r, (long long)len, isbit);
    } else if (c->argc == 2) {
        r.end = (long long)len - 1;
    } else {
        reply_syntax_error(c);
        return;
    }
    if (r.start > r.end) {
        reply_int(c, 0);
        return;
    }
    long long count = popcount(p + r.start, (size_t)(r.end - r.start + 1));
    unsigned char edges[2] = {(unsigned char)(p[r.start] & r.first_out), (unsigned char)(p[r.end] & r.last_out)};
    reply_int(c, count - popcount(edges, 2));
}

/* The first `bit` in bytes [start, end] with the edge masks' bits left
 * out: -1 or (for a 0) the bit after the range when there is none. */
static long long bitpos_range(const unsigned char *p, const bit_range *r, int bit)
{
    long long start = r->start, bytes = r->end - r->start + 1, pos;
    unsigned char ch;
    if (r->first_out) {
        ch = bit ? p[start] & ~r->first_out : p[start] | r->first_out;
        if (r->last_out && bytes == 1) ch = bit ? ch & ~r->last_out : ch | r->last_out;
        pos = first_bit(&ch, 1, bit);
        if (bytes == 1 || (pos != -1 && pos != 8)) return pos == -1 ? -1 : pos + start * 8;
        start++;
        bytes--;
    }
    long long whole = bytes - (r->last_out ? 1 : 0);
    if (whole > 0) {
        pos = first_bit(p + start, (size_t)whole, bit);
        if (bytes == whole || (pos != -1 && pos != whole * 8)) return pos == -1 ? -1 : pos + start * 8;
        start += whole;
    }
    ch = bit ? p[r->end] & ~r->last_out : p[r->end] | r->last_out;
    pos = first_bit(&ch, 1, bit);
    return pos == -1 ? -1 : pos + start * 8;
}

void cmd_bitpos(client *c)
{
    long long bit;
    bit_range r = {0};
    size_t len;
    int isbit = 0, end_given = 0;
    if (!arg_ll_or_reply(c, &c->argv[2], &bit)) return;
    if (bit != 0 && bit != 1) {
        reply_error(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    store_key *k = db_lookup_read(c, &c->argv[1]);
    if (!k) {   /* an endless run of zeros */
        reply_int(c, bit ? -1 : 0);
        return;
    }
    if (!db_check_type(c, k, STORE_STRING)) return;
    const unsigned char *p = (const unsigned char *)store_string_get(k, &len);
    if (c->argc >= 4 && c->argc <= 6) {
        if (!arg_ll_or_reply(c, &c->argv[3], &r.start)) return;
        if (c->argc == 6 && (isbit = range_unit(c, &c->argv[5])) < 0) return;
        if (c->argc >= 5) {
            if (!arg_ll_or_reply(c, &c->argv[4], &r.end)) return;
            end_given = 1;
        } else {
            r.end = isbit ? ((long long)len << 3) + 7 : (long long)len - 1;
        }
        clamp_range(&r, (long long)len, isbit);
    } else if (c->argc == 3) {
        r.end = (long long)len - 1;
    } else {
        reply_syntax_error(c);
        return;
    }
    if (r.start > r.end) {
        reply_int(c, -1);
        return;
    }
    long long pos = bitpos_range(p, &r, (int)bit);
    /* With an explicit end the range is not padded with zeros. */
    if (end_given && bit == 0 && pos == (r.end + 1) * 8) pos = -1;
    reply_int(c, pos);
}

/* ---- BITOP ---- */

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

void cmd_bitop(client *c)
{
    static const char *const names[] = {"and", "or", "xor", "not"};
    int op = -1;
    size_t maxlen = 0, len;
    const resp_slice *dest = &c->argv[2];
    for (int i = 0; i < 4; i++)
        if (arg_is(&c->argv[1], names[i])) op = i;
    if (op < 0) {
        reply_syntax_error(c);
        return;
    }
    if (op == BITOP_NOT && c->argc != 4) {
        reply_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    /* Sources are checked and measured first (Redis's lookups: hits,
     * misses, WRONGTYPE before anything is written); their bytes are read
     * in a second pass. */
    for (int i = 3; i < c->argc; i++) {
        store_key *k;
        if (!db_read_typed(c, &c->argv[i], STORE_STRING, &k)) return;
        if (k && (store_string_get(k, &len), len > maxlen)) maxlen = len;
    }
    store *db = client_db(c);
    store_key *dk;
    if (!maxlen) {
        if ((dk = db_lookup_write(c, dest))) db_release_key(c, dk, dest, STORE_RELEASE_REPLACED);
        reply_int(c, 0);
        return;
    }
    /* The result is built apart, a source at a time, and then set, as
     * Redis does: the destination may be one of the sources. */
    unsigned char *res = mem_alloc(maxlen);
    for (int i = 3; i < c->argc; i++) {
        store_key *k = store_lookup(db, c->argv[i].ptr, c->argv[i].len);
        const unsigned char *p = k ? (const unsigned char *)store_string_get(k, &len) : NULL;
        if (!p) len = 0;
        if (i == 3) {
            if (len) memcpy(res, p, len);
            memset(res + len, 0, maxlen - len);
            if (op == BITOP_NOT)
                for (size_t j = 0; j < maxlen; j++) res[j] = (unsigned char)~res[j];
            continue;
        }
        for (size_t j = 0; j < maxlen; j++) {
            unsigned char b = j < len ? p[j] : 0;
            if (op == BITOP_AND)
                res[j] &= b;
            else if (op == BITOP_OR)
                res[j] |= b;
            else
                res[j] ^= b;
        }
    }
    /* Looked up only now: a lookup of a source that is the destination
     * may have reclaimed it, had its deadline passed meanwhile. */
    if (!(dk = db_lookup_write(c, dest))) dk = store_create_key(db, dest->ptr, dest->len, STORE_STRING);
    store_string_set(db, dk, (const char *)res, maxlen);
    free(res);
    store_key_set_deadline(db, dk, STORE_NO_DEADLINE);
    store_string_set_form(dk, STORE_STR_RAW);
    db_notify(c, STORE_EV_STRING, "set", dest);
    reply_int(c, (long long)maxlen);
}

/* ---- BITFIELD ---- */

enum { BF_GET, BF_SET, BF_INCRBY };
enum { BF_WRAP, BF_SAT, BF_FAIL };

typedef struct bf_op {
    int opcode, sign, bits, overflow;
    uint64_t offset;
    long long value;   /* SET's value, INCRBY's increment */
} bf_op;

/* Redis's getBitfieldTypeFromArgument: i1..i64, u1..u63. */
static int bf_type_or_reply(client *c, const resp_slice *a, bf_op *op)
{
    long long bits;
    if (a->len < 2 || (a->ptr[0] != 'i' && a->ptr[0] != 'u') || !store_str2ll(a->ptr + 1, a->len - 1, &bits) ||
        bits < 1 || bits > (a->ptr[0] == 'i' ? 64 : 63)) {
        reply_error(c, "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
        return 0;
    }
    op->sign = a->ptr[0] == 'i';
    op->bits = (int)bits;
    return 1;
}

/* The operation at argv[*j] (OVERFLOW only changes *overflow: 0 ops
 * returned), *j moved past it; -1 after an error reply. */
static int bf_parse(client *c, int *j, int *overflow, bf_op *op)
{
    static const char *const names[] = {"get", "set", "incrby"};
    int rem = c->argc - *j - 1;
    const resp_slice *a = &c->argv[*j];
    if (arg_is(a, "overflow") && rem >= 1) {
        const resp_slice *t = &c->argv[*j + 1];
        if (arg_is(t, "wrap")) *overflow = BF_WRAP;
        else if (arg_is(t, "sat")) *overflow = BF_SAT;
        else if (arg_is(t, "fail")) *overflow = BF_FAIL;
        else {
            reply_error(c, "ERR Invalid OVERFLOW type specified");
            return -1;
        }
        *j += 2;
        return 0;
    }
    op->opcode = -1;
    for (int i = 0; i < 3; i++)
        if (arg_is(a, names[i]) && rem >= (i == BF_GET ? 2 : 3)) op->opcode = i;
    if (op->opcode < 0) {
        reply_syntax_error(c);
        return -1;
    }
    if (!bf_type_or_reply(c, &c->argv[*j + 1], op) ||
        !bit_offset_or_reply(c, &c->argv[*j + 2], op->bits, &op->offset))
        return -1;
    op->value = 0;
    if (op->opcode != BF_GET && !arg_ll_or_reply(c, &c->argv[*j + 3], &op->value)) return -1;
    op->overflow = *overflow;
    *j += op->opcode == BF_GET ? 3 : 4;
    return 1;
}

/* bits bits at bit offset off, MSB first; bytes past len read as 0. */
static uint64_t bf_get_unsigned(const unsigned char *p, size_t len, uint64_t off, int bits)
{
    uint64_t v = 0;
    for (int i = 0; i < bits; i++, off++) {
        uint64_t byte = off >> 3;
        int b = byte < len ? (p[byte] >> (7 - (off & 7))) & 1 : 0;
        v = v << 1 | (uint64_t)b;
    }
    return v;
}

static int64_t bf_get_signed(const unsigned char *p, size_t len, uint64_t off, int bits)
{
    uint64_t u = bf_get_unsigned(p, len, off, bits);
    if (bits < 64 && (u & ((uint64_t)1 << (bits - 1)))) u |= UINT64_MAX << bits;
    return (int64_t)u;
}

/* The bytes are there: the string was grown to the highest bit written. */
static void bf_set(unsigned char *p, uint64_t off, int bits, uint64_t v)
{
    for (int i = bits - 1; i >= 0; i--, off++) {
        unsigned mask = 1u << (7 - (off & 7));
        if ((v >> i) & 1)
            p[off >> 3] |= (unsigned char)mask;
        else
            p[off >> 3] &= (unsigned char)~mask;
    }
}

/* Redis's checkUnsignedBitfieldOverflow: nonzero if value + incr leaves
 * bits bits, *limit then what WRAP or SAT makes of it. */
static int bf_unsigned_overflow(uint64_t value, int64_t incr, int bits, int how, uint64_t *limit)
{
    uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    int64_t maxincr = (int64_t)(max - value), minincr = -(int64_t)value;
    int dir = 0;
    if (value > max || (incr > 0 && incr > maxincr))
        dir = 1;
    else if (incr < 0 && incr < minincr)
        dir = -1;
    if (!dir) return 0;
    if (how == BF_WRAP)
        *limit = (value + (uint64_t)incr) & ~(UINT64_MAX << bits);
    else if (how == BF_SAT)
        *limit = dir > 0 ? max : 0;
    return dir;
}

static int bf_signed_overflow(int64_t value, int64_t incr, int bits, int how, int64_t *limit)
{
    int64_t max = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
    int64_t min = -max - 1;
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int dir = 0;
    if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr))
        dir = 1;
    else if (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr))
        dir = -1;
    if (!dir) return 0;
    if (how == BF_WRAP) {
        uint64_t r = (uint64_t)value + (uint64_t)incr;
        if (bits < 64) {
            uint64_t mask = UINT64_MAX << bits;
            r = r & ((uint64_t)1 << (bits - 1)) ? r | mask : r & ~mask;
        }
        *limit = (int64_t)r;
    } else if (how == BF_SAT) {
        *limit = dir > 0 ? max : min;
    }
    return dir;
}

/* One SET or INCRBY on p: its reply, and 1 if the field changed. */
static int bf_write(client *c, unsigned char *p, size_t len, const bf_op *op, int grown)
{
    uint64_t oldv, newv, ret;
    int over;
    if (op->sign) {
        int64_t o = bf_get_signed(p, len, op->offset, op->bits), n, lim = 0;
        if (op->opcode == BF_INCRBY) {
            over = bf_signed_overflow(o, op->value, op->bits, op->overflow, &lim);
            n = over ? lim : (int64_t)((uint64_t)o + (uint64_t)op->value);
            ret = (uint64_t)n;
        } else {
            over = bf_signed_overflow(op->value, 0, op->bits, op->overflow, &lim);
            n = over ? lim : op->value;
            ret = (uint64_t)o;
        }
        oldv = (uint64_t)o;
        newv = (uint64_t)n;
    } else {
        uint64_t lim = 0;
        oldv = bf_get_unsigned(p, len, op->offset, op->bits);
        if (op->opcode == BF_INCRBY) {
            over = bf_unsigned_overflow(oldv, op->value, op->bits, op->overflow, &lim);
            newv = over ? lim : oldv + (uint64_t)op->value;
            ret = newv;
        } else {
            over = bf_unsigned_overflow((uint64_t)op->value, 0, op->bits, op->overflow, &lim);
            newv = over ? lim : (uint64_t)op->value;
            ret = oldv;
        }
    }
    if (over && op->overflow == BF_FAIL) {
        reply_null(c);
        return 0;
    }
    reply_int(c, (long long)ret);
    bf_set(p, op->offset, op->bits, newv);
    return grown || oldv != newv;
}

/* All operations are parsed (and every error replied) before any runs,
 * as in Redis; argv is parsed twice rather than the ops kept. */
static void bitfield_generic(client *c, int readonly_cmd)
{
    int overflow = BF_WRAP, nops = 0, writes = 0, rc;
    uint64_t highest = 0;
    bf_op op;
    for (int j = 2; j < c->argc;) {
        if ((rc = bf_parse(c, &j, &overflow, &op)) < 0) return;
        if (!rc) continue;
        nops++;
        if (op.opcode != BF_GET) {
            writes = 1;
            if (highest < op.offset + (uint64_t)op.bits - 1) highest = op.offset + (uint64_t)op.bits - 1;
        }
    }
    unsigned char *p = NULL;
    size_t len = 0;
    int grown = 0, changes = 0;
    if (!writes) {
        store_key *k;
        if (!db_read_typed(c, &c->argv[1], STORE_STRING, &k)) return;
        if (k) p = (unsigned char *)store_string_get(k, &len);
    } else if (readonly_cmd) {
        reply_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
        return;
    } else if (!(p = (unsigned char *)bits_for_write(c, highest, &len, &grown))) {
        return;
    }
    reply_array(c, nops);
    overflow = BF_WRAP;
    for (int j = 2; j < c->argc;) {
        if (bf_parse(c, &j, &overflow, &op) <= 0) continue;   /* cannot fail: parsed above */
        if (op.opcode != BF_GET)
            changes += bf_write(c, p, len, &op, grown);
        else if (op.sign)
            reply_int(c, bf_get_signed(p, len, op.offset, op.bits));
        else
            reply_int(c, (long long)bf_get_unsigned(p, len, op.offset, op.bits));
    }
    if (changes) db_notify(c, STORE_EV_STRING, "setbit", &c->argv[1]);
}

void cmd_bitfield(client *c) { bitfield_generic(c, 0); }
void cmd_bitfield_ro(client *c) { bitfield_generic(c, 1); }
