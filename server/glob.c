/* glob.c - Redis's glob-style matching (KEYS, SCAN MATCH, CONFIG GET,
 * PSUBSCRIBE): '*', '?', '[...]' with ranges and '^', backslash escapes. */
#include <ctype.h>

#include "server.h"

/* Negative values are high bytes read as signed chars: no case to fold. */
static int fold(int c, int nocase) { return nocase && c >= 0 ? tolower(c) : c; }

/* Matches one "[...]" class at *pat; advances pat and plen past it. */
static int match_class(const char **pat, size_t *plen, int c, int nocase)
{
    const char *p = *pat + 1;
    size_t n = *plen - 1;
    int negate = 0, match = 0;
    if (n && *p == '^') negate = 1, p++, n--;
    while (n && *p != ']') {
        if (*p == '\\' && n >= 2) {
            p++, n--;
            if (fold((unsigned char)*p, nocase) == fold(c, nocase)) match = 1;
        } else if (n >= 3 && p[1] == '-') {
            /* plain (signed) chars, as Redis compares them: [a-\xff] is -1..'a' */
            int lo = fold((signed char)p[0], nocase), hi = fold((signed char)p[2], nocase);
            if (lo > hi) { int t = lo; lo = hi; hi = t; }
            int x = fold((signed char)c, nocase);
            if (x >= lo && x <= hi) match = 1;
            p += 2, n -= 2;
        } else if (fold((unsigned char)*p, nocase) == fold(c, nocase)) {
            match = 1;
        }
        p++, n--;
    }
    /* an unterminated class ends the pattern, as in Redis */
    if (n == 0) p--, n++;
    *pat = p;
    *plen = n;
    return negate ? !match : match;
}

/* *give_up is set when the pattern after a '*' matched nowhere in the rest
 * of the string: then no earlier '*' can help by matching more, because the
 * rest would only start later. Without it "a*a*a*...b" takes exponential
 * time. */
static int glob_rec(const char *pat, size_t plen, const char *str, size_t slen, int nocase, int depth,
                    int *give_up)
{
    int consumed = slen > 0;
    if (depth > 1000) return 0;   /* pathological patterns: give up, like Redis's nesting cap */
    while (plen && slen) {
        switch (*pat) {
        case '*':
            while (plen > 1 && pat[1] == '*') pat++, plen--;
            if (plen == 1) return 1;
            for (size_t i = 0; i <= slen; i++) {
                if (glob_rec(pat + 1, plen - 1, str + i, slen - i, nocase, depth + 1, give_up)) return 1;
                if (*give_up) return 0;
            }
            *give_up = 1;
            return 0;
        case '?':
            break;
        case '[':
            if (!match_class(&pat, &plen, (unsigned char)*str, nocase)) return 0;
            break;
        case '\\':
            if (plen >= 2) pat++, plen--;
            /* fall through */
        default:
            if (fold((unsigned char)*pat, nocase) != fold((unsigned char)*str, nocase)) return 0;
            break;
        }
        pat++, plen--;
        str++, slen--;
    }
    /* Trailing stars are skipped only once the string ran out inside the
     * loop: an empty string matches nothing but the empty pattern. */
    if (consumed)
        while (plen && *pat == '*') pat++, plen--;
    return plen == 0 && slen == 0;
}

int glob_match(const char *pat, size_t plen, const char *str, size_t slen, int nocase)
{
    int give_up = 0;
    return glob_rec(pat, plen, str, slen, nocase, 0, &give_up);
}
