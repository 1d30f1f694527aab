/* replay.c - main() for fuzz harnesses built without libFuzzer: runs each
 * file (or every file in each directory) once, so ctest replays the seed
 * corpus and past crashes with any compiler. "-flags" are libFuzzer's and
 * are ignored, so both builds take the same command line. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0, n;
    do {
        if (size == cap) {
            cap = cap ? cap * 2 : 4096;
            uint8_t *grown = realloc(data, cap);
            if (!grown) {
                free(data);
                fclose(f);
                return -1;
            }
            data = grown;
        }
        n = fread(data + size, 1, cap - size, f);
        size += n;
    } while (n > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

/* Returns how many inputs ran, or -1. */
static long run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return run_file(path) == 0 ? 1 : -1;
    DIR *d = opendir(path);
    if (!d) return -1;
    long ran = 0;
    struct dirent *e;
    while (ran >= 0 && (e = readdir(d))) {
        char child[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
        ran = run_file(child) == 0 ? ran + 1 : -1;
    }
    closedir(d);
    return ran;
}

int main(int argc, char **argv)
{
    long total = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') continue;
        long ran = run_path(argv[i]);
        if (ran < 0) return 1;
        total += ran;
    }
    printf("%s: %ld inputs replayed, no failures\n", argv[0], total);
    return total > 0 ? 0 : 1;
}
