/* lolwut.c - LOLWUT: Redis 7.0's version line, and the art of its VERSION 5
 * (Georg Nees's "Schotter" in braille) and VERSION 6 (a skyline in gray). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mem.h"

#define LW_RAND_MAX 0x7fffffff

/* rand()'s range, from the server's own generator. */
static int lw_rand(server *s) { return (int)(server_random(s) & LW_RAND_MAX); }

/* A grid of small colour numbers; outside it reads 0 and writes vanish. */
typedef struct canvas {
    int w, h;
    unsigned char *px;
} canvas;

static canvas canvas_new(int w, int h, int bg)
{
    canvas cv = {w, h, mem_alloc((size_t)w * (size_t)h)};
    memset(cv.px, bg, (size_t)w * (size_t)h);
    return cv;
}

static void plot(canvas *cv, int x, int y, int color)
{
    if (x >= 0 && y >= 0 && x < cv->w && y < cv->h) cv->px[(size_t)y * (size_t)cv->w + (size_t)x] = (unsigned char)color;
}

static int pixel(const canvas *cv, int x, int y)
{
    return x >= 0 && y >= 0 && x < cv->w && y < cv->h ? cv->px[(size_t)y * (size_t)cv->w + (size_t)x] : 0;
}

/* Bresenham, both ends included. */
static void line(canvas *cv, int x0, int y0, int x1, int y1, int color)
{
    int dx = abs(x1 - x0), dy = abs(y1 - y0), stepx = x0 < x1 ? 1 : -1, stepy = y0 < y1 ? 1 : -1;
    int err = dx - dy;
    for (;;) {
        plot(cv, x0, y0, color);
        if (x0 == x1 && y0 == y1) return;
        int twice = 2 * err;
        if (twice > -dy) err -= dy, x0 += stepx;
        if (twice < dx) err += dx, y0 += stepy;
    }
}

/* A square of side `side` centred on (cx, cy), turned by `angle`: its
 * corners on the circle through them, in Redis's float arithmetic so the
 * same draws give the same pixels. */
static void square(canvas *cv, int cx, int cy, float side, float angle)
{
    int xs[4], ys[4];
    float radius = side;
    radius /= 1.4142135623;   /* a square inscribed in a circle of radius 1 has side sqrt(2) */
    radius = round(radius);
    float k = M_PI / 4 + angle;
    for (int i = 0; i < 4; i++, k += M_PI / 2) {
        xs[i] = (int)round(sin(k) * radius + cx);
        ys[i] = (int)round(cos(k) * radius + cy);
    }
    for (int i = 0; i < 4; i++) line(cv, xs[i], ys[i], xs[(i + 1) % 4], ys[(i + 1) % 4], 1);
}

/* A random fraction of up to row/rows (its sign drawn later). */
static float jitter(server *s, int row, int rows) { return (float)lw_rand(s) / (float)LW_RAND_MAX / rows * row; }

/* Schotter: rows of squares, more shaken the lower they are. */
static canvas schotter(server *s, int cols, int per_row, int per_col)
{
    int width = cols * 2, pad = width > 4 ? 2 : 0;
    float side = (float)(width - pad * 2) / per_row;
    canvas cv = canvas_new(width, (int)(side * per_col + pad * 2), 0);
    for (int row = 0; row < per_col; row++) {
        for (int col = 0; col < per_row; col++) {
            int cx = (int)(col * side + side / 2 + pad), cy = (int)(row * side + side / 2 + pad);
            float turn = 0, dx, dy;
            if (row > 1) {
                turn = jitter(s, row, per_col);
                dx = jitter(s, row, per_col);
                dy = jitter(s, row, per_col);
                if (lw_rand(s) % 2) turn = -turn;
                if (lw_rand(s) % 2) dx = -dx;
                if (lw_rand(s) % 2) dy = -dy;
                /* added in float, then truncated, as Redis's int += float */
                cx = (int)(cx + dx * side / 3);
                cy = (int)(cy + dy * side / 3);
            }
            square(&cv, cx, cy, side, turn);
        }
    }
    return cv;
}

/* Each 2x4 block of pixels is one braille character (U+2800 plus the dots'
 * bits, in the braille dot order), UTF-8 encoded; a newline after each row
 * of blocks but one that ends exactly on the last pixel row. */
static void braille(const canvas *cv, resp_buf *out)
{
    static const signed char dots[8][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}};
    for (int y = 0; y < cv->h; y += 4) {
        for (int x = 0; x < cv->w; x += 2) {
            unsigned code = 0x2800;
            for (int b = 0; b < 8; b++)
                if (pixel(cv, x + dots[b][0], y + dots[b][1])) code |= 1u << b;
            char utf8[3] = {(char)(0xE0 | (code >> 12)), (char)(0x80 | ((code >> 6) & 0x3F)),
                            (char)(0x80 | (code & 0x3F))};
            resp_buf_append(out, utf8, 3);
        }
        if (y != cv->h - 1) resp_buf_append(out, "\n", 1);
    }
}

/* One building, from the bottom row up: the roof two pixels narrower each
 * side, two-pixel windows of a random other gray on alternate rows. */
static void building(server *s, canvas *cv, int left, int width, int height, int windows, int color)
{
    int bottom = cv->h - 1, top = bottom - height + 1;
    for (int y = bottom; y >= top; y--) {
        for (int x = left; x < left + width; x++) {
            if (y == top && (x <= left + 1 || x >= left + width - 2)) continue;
            int c = color;
            if (windows && x > left + 1 && x < left + width - 2 && y > top + 1 && y < bottom - 1) {
                int wx = x - (left + 1), wy = y - (top + 1);
                if ((wx / 2) % 2 && wy % 2) {
                    do c = 1 + lw_rand(s) % 2;
                    while (c == color);
                    if (wx % 2) c = pixel(cv, x - 1, y);   /* both pixels of a window alike */
                }
            }
            plot(cv, x, y, c);
        }
    }
}

/* Two rows of gray buildings behind (the lighter further), then black
 * ones with windows in front. */
static void skyline(server *s, canvas *cv)
{
    for (int color = 2; color >= 1; color--) {
        for (int at = -10; at < cv->w;) {
            at += lw_rand(s) % 8;
            int width = 10 + lw_rand(s) % 9;
            int height = cv->h / 2 + (lw_rand(s) % cv->h) / (color == 2 ? 2 : 3);
            building(s, cv, at, width, height, 0, color);
            at += color == 2 ? width / 2 : width + 1;
        }
    }
    for (int at = -10; at < cv->w;) {
        at += lw_rand(s) % 8;
        int width = 5 + lw_rand(s) % 14;
        if (width % 4) width += width % 3;
        int height = cv->h / 3 + (lw_rand(s) % cv->h) / 2;
        building(s, cv, at, width, height, 1, 0);
        at += width + 5;
    }
}

/* Each pixel a space in its gray as foreground and background colour. */
static void ansi(const canvas *cv, resp_buf *out)
{
    static const char *const grays[4] = {"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"};
    for (int y = 0; y < cv->h; y++) {
        for (int x = 0; x < cv->w; x++) resp_buf_appendf(out, "\033[%s \033[0m", grays[pixel(cv, x, y) & 3]);
        if (y != cv->h - 1) resp_buf_append(out, "\n", 1);
    }
}

/* The optional numbers after the version, clamped to [1, max]; 0 after the
 * error reply. */
static int numbers(client *c, int first, long long *v, const long long *max, int n)
{
    for (int i = 0; i < n; i++) {
        if (first + i < c->argc && !arg_ll_or_reply(c, &c->argv[first + i], &v[i])) return 0;
        if (v[i] < 1) v[i] = 1;
        if (v[i] > max[i]) v[i] = max[i];
    }
    return 1;
}

static void reply_art(client *c, resp_buf *text, const char *caption)
{
    resp_buf_appendf(text, "%s" LATCHD_REDIS_VERSION "\n", caption);
    reply_verbatim(c, text->data, text->len);
    resp_buf_free(text);
}

/* Redis picks the art by the version's text ("5.0.0" for VERSION 5): 5.x
 * but 5.9 and 4.9 draw Schotter, 6.x but 6.9 and 5.9 the skyline. */
void cmd_lolwut(client *c)
{
    server *s = c->srv;
    char ver[32] = LATCHD_REDIS_VERSION;
    int first = 1;
    if (c->argc >= 3 && arg_is(&c->argv[1], "version")) {
        long long v;
        if (!arg_ll_or_reply(c, &c->argv[2], &v)) return;
        snprintf(ver, sizeof(ver), "%u.0.0", (unsigned)v);
        first = 3;
    }
    int five = (ver[0] == '5' && ver[1] == '.' && ver[2] != '9') || (ver[0] == '4' && ver[1] == '.' && ver[2] == '9');
    int six = (ver[0] == '6' && ver[1] == '.' && ver[2] != '9') || (ver[0] == '5' && ver[1] == '.' && ver[2] == '9');
    resp_buf text;
    resp_buf_init(&text);
    if (five) {
        long long v[3] = {66, 8, 12};
        static const long long max[3] = {1000, 200, 200};
        if (!numbers(c, first, v, max, 3)) return;
        canvas cv = schotter(s, (int)v[0], (int)v[1], (int)v[2]);
        braille(&cv, &text);
        free(cv.px);
        reply_art(c, &text, "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    } else if (six) {
        long long v[2] = {80, 20};
        static const long long max[2] = {1000, 1000};
        if (!numbers(c, first, v, max, 2)) return;
        canvas cv = canvas_new((int)v[0], (int)v[1], 3);
        skyline(s, &cv);
        ansi(&cv, &text);
        free(cv.px);
        reply_art(c, &text, "\nDedicated to the 8 bit game developers of past and present.\n"
                            "Original 8 bit image from Plaguemon by hikikomori. Redis ver. ");
    } else {
        reply_art(c, &text, "Redis ver. ");
    }
}
