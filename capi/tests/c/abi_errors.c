/*
 * The C ABI's refusals, as a C engine meets them: compiled against include/mmqgen.h with -Wall -Werror and
 * linked to libmmqgen.so by capi/tests/abi.rs. Runs with or without a GPU: without one, opening a handle must
 * say so (MMQGEN_ERR_NO_GPU and a sentence); with one, the handle's calls must refuse bad pointers and shapes
 * before anything is queued. Exits 0 when every check holds; prints each failed check.
 *
 * Usage: abi_errors SCRATCH_DIR
 */
#include "mmqgen.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            failures++;                                                                                      \
            printf("FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);                                         \
            printf(__VA_ARGS__);                                                                             \
            printf("\n");                                                                                    \
        }                                                                                                    \
    } while (0)

/* A refusal: the status, and a last error of one line that mentions `word`. */
static void expect(int rc, int status, const char *word, const char *what) {
    const char *sentence = mmqgen_last_error();
    CHECK(rc == status, "%s: got status %d, expected %d (%s)", what, rc, status, sentence);
    CHECK(sentence != NULL && strlen(sentence) > 0, "%s: no sentence", what);
    CHECK(strchr(sentence, '\n') == NULL, "%s: the sentence spans lines: %s", what, sentence);
    CHECK(strstr(sentence, word) != NULL, "%s: '%s' does not mention '%s'", what, sentence, word);
    printf("ok   %-48s -> %d: %s\n", what, rc, sentence);
}

static void *other_thread(void *arg) {
    (void)arg;
    /* Errors are per thread: this thread has made no call yet. */
    CHECK(strcmp(mmqgen_last_error(), "") == 0, "another thread's error leaked: %s", mmqgen_last_error());
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        printf("usage: abi_errors SCRATCH_DIR\n");
        return 2;
    }
    CHECK(mmqgen_abi_version() == MMQGEN_ABI_VERSION, "abi %u, header %d", mmqgen_abi_version(),
          MMQGEN_ABI_VERSION);
    CHECK(strlen(mmqgen_version()) > 0, "empty version");
    CHECK(strcmp(mmqgen_last_error(), "") == 0, "a last error before any call: %s", mmqgen_last_error());

    expect(mmqgen_open(0, NULL, NULL), MMQGEN_ERR_INVALID_ARGUMENT, "NULL", "open with no handle pointer");
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, other_thread, NULL) == 0, "pthread_create");
    pthread_join(thread, NULL);

    mmqgen_handle *handle = (mmqgen_handle *)&failures; /* must be overwritten with NULL on failure */
    expect(mmqgen_open(-1, NULL, &handle), MMQGEN_ERR_INVALID_ARGUMENT, "ordinal", "open GPU -1");
    CHECK(handle == NULL, "a failed open left the handle set");

    char path[4096];
    snprintf(path, sizeof path, "%s/missing.toml", argv[1]);
    expect(mmqgen_open(0, path, &handle), MMQGEN_ERR_CONFIG, "config", "open with a missing config");
    snprintf(path, sizeof path, "%s/bad.toml", argv[1]);
    FILE *bad = fopen(path, "w");
    CHECK(bad != NULL, "cannot write %s", path);
    if (bad) {
        fputs("[[rule]]\narch = \"sm_90\"\ntokens = { min = 1 }\nvariant = \"no_such_variant\"\n", bad);
        fclose(bad);
    }
    expect(mmqgen_open(0, path, &handle), MMQGEN_ERR_CONFIG, "no_such_variant", "open with a bad config");

    float dummy[4] = {0};
    expect(mmqgen_q6k_matmul(NULL, dummy, 210, 1, 256, dummy, 1, dummy, NULL), MMQGEN_ERR_INVALID_ARGUMENT,
           "handle", "matmul without a handle");
    expect(mmqgen_reserve(NULL, NULL, 1, 1, 256, NULL), MMQGEN_ERR_INVALID_ARGUMENT, "handle",
           "reserve without a handle");
    mmqgen_close(NULL);

    int rc = mmqgen_open(0, NULL, &handle);
    if (rc != MMQGEN_OK) {
        expect(rc, MMQGEN_ERR_NO_GPU, "GPU", "open GPU 0 on a machine without one");
        CHECK(handle == NULL, "a failed open left the handle set");
        printf("no GPU: the handle's own refusals were not reached\n");
    } else {
        printf("GPU 0 opened: checking the handle's refusals\n");
        /* Never dereferenced: every call below is refused before anything is queued. */
        const void *w = (const void *)0x100000;
        const float *x = (const float *)0x200000;
        float *out = (float *)0x300000;
        size_t bytes = (size_t)4096 * 16 * 210;
        expect(mmqgen_q6k_matmul(handle, NULL, bytes, 4096, 4096, x, 1, out, NULL), MMQGEN_ERR_INVALID_ARGUMENT,
               "weights", "NULL weights");
        expect(mmqgen_q6k_matmul(handle, w, bytes, 4096, 4096, NULL, 1, out, NULL), MMQGEN_ERR_INVALID_ARGUMENT,
               "x", "NULL x");
        expect(mmqgen_q6k_matmul(handle, w, bytes, 4096, 4096, x, 1, NULL, NULL), MMQGEN_ERR_INVALID_ARGUMENT,
               "out", "NULL out");
        expect(mmqgen_q6k_matmul(handle, w, bytes, 0, 4096, x, 1, out, NULL), MMQGEN_ERR_INVALID_ARGUMENT, "m = 0",
               "m = 0");
        expect(mmqgen_q6k_matmul(handle, w, bytes, 4096, 4000, x, 1, out, NULL), MMQGEN_ERR_INVALID_ARGUMENT,
               "256", "K = 4000");
        expect(mmqgen_q6k_matmul(handle, w, bytes, 4096, 4096, x, -3, out, NULL), MMQGEN_ERR_INVALID_ARGUMENT,
               "n = -3", "n = -3");
        expect(mmqgen_q6k_matmul(handle, w, bytes, 4096, (int64_t)1 << 31, x, 1, out, NULL),
               MMQGEN_ERR_INVALID_ARGUMENT, "2^31", "K = 2^31");
        expect(mmqgen_q6k_matmul(handle, w, bytes - 1, 4096, 4096, x, 1, out, NULL), MMQGEN_ERR_INVALID_ARGUMENT,
               "need", "one weight byte short");
        expect(mmqgen_q6k_matmul(handle, (const char *)w + 1, bytes, 4096, 4096, x, 1, out, NULL),
               MMQGEN_ERR_INVALID_ARGUMENT, "odd", "weights at an odd address");
        expect(mmqgen_reserve(handle, NULL, 4096, 0, 4096, NULL), MMQGEN_ERR_INVALID_ARGUMENT, "max_n",
               "reserve for n = 0");
        mmqgen_close(handle);
    }
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
