/* cmd_bench.c — `glue bench <what> ...`: benchmarks against reference
 * implementations (eval/bench/). One row per benchmark in BENCHES; each parses
 * its own options. */
#include "cli/commands.h"
#include "core/common.h"
#include "eval/bench/bench.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    CommandFn fn;        /* gets argv[0] = the benchmark's name */
    const char *summary;
} Bench;

static const Bench BENCHES[] = {
    {"fasttext", bench_fasttext, "accuracy and training time vs the official fastText binary"},
    {"bert", bench_bert, "training/inference speed and latency vs the same model in PyTorch"},
    {"scaling", bench_scaling, "data-parallel pretraining: 1 rank x 2 threads vs 2 ranks x 1 thread (MPI)"},
    {"rnn", bench_rnn, "BiLSTM / BiGRU training and inference speed vs PyTorch's nn.LSTM / nn.GRU"},
};
static const int NUM_BENCHES = (int)(sizeof BENCHES / sizeof BENCHES[0]);

static void bench_list(FILE *f) {
    fprintf(f, "benchmarks:\n");
    for (int i = 0; i < NUM_BENCHES; i++) fprintf(f, "  %-10s %s\n", BENCHES[i].name, BENCHES[i].summary);
}

int cmd_bench(int argc, char **argv) {
    if (argc < 2 || argv[1][0] == '-') {
        user_error("usage: glue bench <benchmark> [options]", "bench: which benchmark?");
        bench_list(stderr);
        return EXIT_USAGE;
    }
    for (int i = 0; i < NUM_BENCHES; i++)
        if (strcmp(argv[1], BENCHES[i].name) == 0) return BENCHES[i].fn(argc - 1, argv + 1);
    user_error("usage: glue bench <benchmark> [options]", "bench: unknown benchmark '%s'", argv[1]);
    bench_list(stderr);
    return EXIT_USAGE;
}
