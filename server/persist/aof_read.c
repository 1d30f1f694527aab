/* aof_read.c - the append-only file's text as a loader reads it: command
 * records (RESP arrays of bulks, "#" annotation lines between them) and the
 * multi-part manifest's lines. Memory only: aof.c owns the files. */
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "persist.h"

void persist_aof_args_free(persist_aof_args *a)
{
    free(a->v);
    a->v = NULL;
    a->cap = 0;
    a->argc = 0;
}

/* A decimal after a '*' or '$' up to CRLF: *end is past the LF. -1 bad,
 * -2 the line is not complete. Redis reads such a line with fgets and
 * atoi/strtol; a loader of our own takes digits only. */
static long long header_number(const unsigned char *p, size_t len, size_t at, size_t *end)
{
    const unsigned char *nl = memchr(p + at, '\n', len - at);
    if (!nl) return -2;
    size_t stop = (size_t)(nl - p);
    if (stop == at || p[stop - 1] != '\r') return -1;
    long long v = 0;
    size_t i = at;
    if (i == stop - 1) return -1;
    for (; i < stop - 1; i++) {
        if (p[i] < '0' || p[i] > '9' || v > (1LL << 40)) return -1;
        v = v * 10 + (p[i] - '0');
    }
    *end = stop + 1;
    return v;
}

int persist_aof_next(const unsigned char *p, size_t len, size_t *pos, persist_aof_args *a)
{
    size_t at = *pos;
    for (;;) {   /* annotations ("#TS:..." lines) are skipped */
        if (at >= len) return PERSIST_AOF_END;
        if (p[at] != '#') break;
        const unsigned char *nl = memchr(p + at, '\n', len - at);
        at = nl ? (size_t)(nl - p) + 1 : len;   /* a last line without its newline is read too, as fgets does */
        *pos = at;
    }
    if (p[at] != '*') return PERSIST_ERR_FORMAT;
    size_t next;
    long long argc = header_number(p, len, at + 1, &next);
    if (argc == -2) return PERSIST_ERR_TRUNCATED;
    if (argc < 1) return PERSIST_ERR_FORMAT;
    at = next;
    for (long long j = 0; j < argc; j++) {
        /* grown as arguments are found, not to what the header claims:
         * a corrupt count must not allocate more than the bytes can hold */
        if ((size_t)j == a->cap) {
            a->cap = a->cap ? a->cap * 2 : 16;
            a->v = mem_realloc(a->v, a->cap * sizeof(*a->v));
        }
        if (at >= len) return PERSIST_ERR_TRUNCATED;
        if (p[at] != '$') return PERSIST_ERR_FORMAT;
        long long n = header_number(p, len, at + 1, &next);
        if (n == -2) return PERSIST_ERR_TRUNCATED;
        if (n < 0) return PERSIST_ERR_FORMAT;
        if ((size_t)n > len - next || len - next - (size_t)n < 2) return PERSIST_ERR_TRUNCATED;
        if (p[next + n] != '\r' || p[next + n + 1] != '\n') return PERSIST_ERR_FORMAT;
        a->v[j].p = (const char *)p + next;
        a->v[j].len = (size_t)n;
        at = next + (size_t)n + 2;
    }
    a->argc = (int)argc;
    *pos = at;
    return PERSIST_OK;
}

/* One word of a manifest line: bare, or in double quotes with Redis's
 * sdscatrepr escapes (\" \\ \n \r \t \a \b \xHH), as sdssplitargs reads it. */
static int manifest_word(const char *p, size_t len, size_t *at, char *out, size_t cap, size_t *olen)
{
    size_t i = *at, n = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t')) i++;
    if (i >= len) return 0;
    if (p[i] == '"') {
        for (i++;; i++) {
            if (i >= len) return -1;
            char ch = p[i];
            if (ch == '"') {
                i++;
                if (i < len && p[i] != ' ' && p[i] != '\t') return -1;
                break;
            }
            if (ch == '\\') {
                if (++i >= len) return -1;
                static const char from[] = "nrtab", to[] = "\n\r\t\a\b";
                const char *f = strchr(from, p[i]);
                if (p[i] == 'x' && i + 2 < len) {
                    char hex[3] = {p[i + 1], p[i + 2], 0};
                    char *e;
                    ch = (char)strtol(hex, &e, 16);
                    if (*e) return -1;
                    i += 2;
                } else {
                    ch = f ? to[f - from] : p[i];
                }
            }
            if (n + 1 >= cap) return -1;
            out[n++] = ch;
        }
    } else {
        while (i < len && p[i] != ' ' && p[i] != '\t') {
            if (n + 1 >= cap) return -1;
            out[n++] = p[i++];
        }
    }
    out[n] = '\0';
    *olen = n;
    *at = i;
    return 1;
}

int persist_aof_manifest_line(const char *line, size_t len, persist_aof_info *info)
{
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    size_t at = 0;
    char key[PERSIST_AOF_NAME_MAX], val[PERSIST_AOF_NAME_MAX];
    size_t kl, vl;
    int have_name = 0, have_seq = 0, have_type = 0, r;
    while (at < len && (line[at] == ' ' || line[at] == '\t')) at++;
    if (at == len || line[at] == '#') return 0;   /* blank or a comment */
    while ((r = manifest_word(line, len, &at, key, sizeof key, &kl)) == 1) {
        if (manifest_word(line, len, &at, val, sizeof val, &vl) != 1) return PERSIST_ERR_FORMAT;
        if (strcmp(key, "file") == 0) {
            if (vl == 0 || memchr(val, '/', vl) || memchr(val, '\0', vl)) return PERSIST_ERR_FORMAT;
            memcpy(info->name, val, vl + 1);
            have_name = 1;
        } else if (strcmp(key, "seq") == 0) {
            char *e;
            info->seq = strtoll(val, &e, 10);
            if (*e || vl == 0 || info->seq < 0) return PERSIST_ERR_FORMAT;
            have_seq = 1;
        } else if (strcmp(key, "type") == 0) {
            if (vl != 1 || !val[0] || !strchr("bhi", val[0])) return PERSIST_ERR_FORMAT;   /* strchr finds a NUL too */
            info->type = val[0];
            have_type = 1;
        }   /* other keys are Redis's future ones: skipped, as it does */
    }
    if (r < 0 || !have_name || !have_seq || !have_type) return PERSIST_ERR_FORMAT;
    return 1;
}
