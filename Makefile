# glue — build, test and run. `make` builds ./glue; `make test` builds and runs
# every test; `make run` fetches the data and runs the main job; `make asan`
# builds and tests under AddressSanitizer + UndefinedBehaviorSanitizer.
# BUILD=dir keeps object files apart (e.g. for parallel work or sanitizers).
# MPI=no builds without MPI even where it is installed (src/probe_deps.sh).

BUILD   ?= build
# Every core by default (the objects, the fuzz harnesses and the library are three
# builds); an explicit -jN on the command line wins, and the makes this one starts
# share its jobs.
ifeq ($(MAKELEVEL),0)
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif
endif
CC      ?= cc
# x86-64-v2 (SSE4.2): the binary runs on any x86-64 CPU of the last 15 years,
# whichever machine built it. The hot loops are compiled again for AVX2 and
# AVX-512 and chosen at run time (src/core/kernels.h; GLUE_KERNELS forces one).
OPT     ?= -O2 -march=x86-64-v2
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Wno-unused-parameter
CPPFLAGS_ALL = -std=c11 -D_GNU_SOURCE -Isrc -I. $(WARN) -fopenmp -MMD -MP $(DEP_CFLAGS)
LDFLAGS_ALL  = -fopenmp $(LDFLAGS)
MPI     ?= auto
SHARED  ?= $(or $(GLUE_SHARED),../shared)
MIRROR  ?= $(if $(wildcard $(SHARED)/data),$(SHARED)/data,)

-include $(BUILD)/deps.mk

LIB_SRC  := $(sort $(wildcard src/*/*.c src/*/*/*.c tasks/*.c eval/*.c eval/*/*.c pretrain/*.c data/*.c))
TEST_SRC := $(sort $(wildcard tests/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
GLUE_BIN ?= glue

.PHONY: all test run asan bench clean deps fuzz fuzz-build fuzz-seeds fuzz-bins fuzz-campaign lib lib-test tsan install bench-serve soak-serve
all: $(GLUE_BIN)

$(BUILD)/deps.mk: src/probe_deps.sh
	@mkdir -p $(BUILD)
	@CC="$(CC)" MPI="$(MPI)" sh src/probe_deps.sh > $@.tmp && mv $@.tmp $@

$(GLUE_BIN): $(BUILD)/deps.mk $(MAIN_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) $(MAIN_OBJ) $(LIB_OBJ) -o $@ $(LDFLAGS_ALL) $(DEP_LIBS)

$(BUILD)/glue_tests: $(BUILD)/deps.mk $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) $(TEST_OBJ) $(LIB_OBJ) -o $@ $(LDFLAGS_ALL) $(DEP_LIBS)

# The run-time-selected kernels (src/core/kernels.h): each level's copy is
# compiled for its instruction set; nothing else in the binary uses them.
# -fno-trapping-math lets GCC 12 if-convert fast_expf's clamps (it may not
# speculate a multiply that could raise an FP flag); without it every exp and
# GELU loop stays scalar below AVX-512. The program never enables FP traps.
# -fno-math-errno lets sqrtf vectorise (AdamW; the result is the same
# correctly rounded root, only errno, never read, is not set).
$(BUILD)/src/core/kernels_portable.o $(BUILD)/pic/src/core/kernels_portable.o: KERN_FLAGS := -fno-trapping-math -fno-math-errno
$(BUILD)/src/core/kernels_avx2.o $(BUILD)/pic/src/core/kernels_avx2.o: KERN_FLAGS := -fno-trapping-math -fno-math-errno -mavx2 -mfma
$(BUILD)/src/core/kernels_avx512.o $(BUILD)/pic/src/core/kernels_avx512.o: KERN_FLAGS := -fno-trapping-math -fno-math-errno -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx2 -mfma

# The commit a binary was built from, for results files (core/provenance.c is
# rebuilt every time, so it is never stale).
GLUE_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
$(BUILD)/src/core/provenance.o $(BUILD)/pic/src/core/provenance.o: CPPFLAGS_ALL += -DGLUE_COMMIT='"$(GLUE_COMMIT)"'
$(BUILD)/src/core/provenance.o $(BUILD)/pic/src/core/provenance.o: FORCE
.PHONY: FORCE
FORCE:

$(BUILD)/%.o: %.c $(BUILD)/deps.mk
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS) $(KERN_FLAGS) -c $< -o $@

# Every object of the program as a static archive and a glue linked from it:
# a registry that named its models weakly would lose them all here
# (tests/test_registry.c). Not libglue (below): that is the public library.
$(BUILD)/glue-objs.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $(LIB_OBJ)

$(BUILD)/glue-static: $(BUILD)/deps.mk $(MAIN_OBJ) $(BUILD)/glue-objs.a
	$(CC) $(CFLAGS) $(MAIN_OBJ) $(BUILD)/glue-objs.a -o $@ $(LDFLAGS_ALL) $(DEP_LIBS)

include src/lib/lib.mk

# The tests call ./glue for the CLI checks and the PyTorch references; GLUE_BIN
# tells them which binary this build produced.
# The whole suite (no T) also builds the fuzz harnesses and runs their seed and
# regression inputs once (fuzz-seeds), so they keep compiling and passing; first,
# so that the test runner's "N passed, N failed" is the last line.
# LIB_TEST=0 (make asan) leaves out lib-test: the installed library, the
# example and the Python binding would need the sanitizer runtime preloaded;
# the library's code is the binary's, which the suite runs, and make tsan
# checks the library's threads.
FUZZ_IN_TEST ?= 1
LIB_TEST ?= 1
test: $(GLUE_BIN) $(BUILD)/glue_tests $(BUILD)/glue-static
	$(if $(T),,$(if $(filter 1,$(FUZZ_IN_TEST)),$(MAKE) --no-print-directory fuzz-seeds))
	$(if $(T),,$(if $(filter 1,$(LIB_TEST)),$(MAKE) --no-print-directory lib-test))
	GLUE_BIN=$(abspath $(GLUE_BIN)) GLUE_STATIC_BIN=$(BUILD)/glue-static $(BUILD)/glue_tests $(T)

# Sanitizer reports go to files (a leak in a `glue` the tests run as a child
# does not change its exit code): any report fails the target after the tests.
SAN_LOGS = build-asan/sanitizer-logs
asan:
	@rm -rf $(SAN_LOGS) && mkdir -p $(SAN_LOGS)
	ASAN_OPTIONS=detect_leaks=1:log_path=$(CURDIR)/$(SAN_LOGS)/asan \
	UBSAN_OPTIONS=print_stacktrace=1:log_path=$(CURDIR)/$(SAN_LOGS)/ubsan \
	$(MAKE) BUILD=build-asan GLUE_BIN=build-asan/glue FUZZ_IN_TEST=0 LIB_TEST=0 \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined" test
	@if [ -n "$$(ls $(SAN_LOGS))" ]; then cat $(SAN_LOGS)/*; \
	  echo "asan: sanitizer reports above ($(SAN_LOGS))"; exit 1; fi
	@echo "asan: no sanitizer reports (LeakSanitizer on)"

# Fuzzing (tests/fuzz/README.md): libFuzzer harnesses built with clang and
# ASan + UBSan in $(FUZZ_BUILD)/, each run for FUZZ_SECONDS (0: the committed
# seed inputs once each, the quick pass `make test` does); the figures go to
# $(FUZZ_OUT).json and .md (results/fuzz by default).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_OUT     ?= results/fuzz
FUZZ_CFLAGS  := -Wno-pass-failed -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_NAMES   := $(sort $(basename $(notdir $(filter-out %/fuzz_util.c,$(wildcard tests/fuzz/fuzz_*.c)))))

fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang CFLAGS="$(FUZZ_CFLAGS)" LDFLAGS="-fsanitize=address,undefined" fuzz-bins

fuzz: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_OUT) $(FUZZ_NAMES)

# The long campaign (tests/fuzz/campaign.py): each harness until 10M executions
# or one CPU hour, in segments on corpora kept in FUZZ_STATE, FUZZ_BUDGET wall
# seconds per invocation over FUZZ_JOBS harnesses at once; run again to continue.
# Each finished segment is a line of $(FUZZ_CAMPAIGN).ledger.jsonl (committed
# with the figures $(FUZZ_CAMPAIGN).json and .md, so they outlive the machine).
FUZZ_STATE    ?= $(FUZZ_BUILD)/campaign
FUZZ_BUDGET   ?= 3600
FUZZ_JOBS     ?= 1
FUZZ_CAMPAIGN ?= results/fuzz_campaign
fuzz-campaign: fuzz-build
	python3 tests/fuzz/campaign.py --build $(FUZZ_BUILD) --state $(FUZZ_STATE) --budget $(FUZZ_BUDGET) \
	  --jobs $(FUZZ_JOBS) --ledger $(FUZZ_CAMPAIGN).ledger.jsonl --out $(FUZZ_CAMPAIGN) $(FUZZ_NAMES)

# The quick pass of `make test`: every harness builds and runs its seeds once.
# Then the campaign's bookkeeping on one harness: two invocations must add up
# to two segments and exactly the target's executions.
fuzz-seeds: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_BUILD) 0 $(FUZZ_BUILD)/fuzz-seeds $(FUZZ_NAMES)
	rm -rf $(FUZZ_BUILD)/campaign-check
	for n in 1500 3000; do python3 tests/fuzz/campaign.py --build $(FUZZ_BUILD) --state $(FUZZ_BUILD)/campaign-check \
	  --budget 60 --target-execs $$n --out $(FUZZ_BUILD)/campaign-check/out fuzz_tokenizer > /dev/null || exit 1; done
	python3 -c "import json, sys; h = json.load(open('$(FUZZ_BUILD)/campaign-check/out.json'))['harnesses'][0]; \
	  sys.exit(0 if (h['segments'], h['executions'], h['target_met']) == (2, 3000, True) else 'fuzz-campaign check: %s' % h)"
	@echo "fuzz: campaign bookkeeping ok"

# COMMIT names the commit the harnesses were built from; the campaign's ledger
# records it with every segment.
fuzz-bins: $(addprefix $(BUILD)/fuzz/,$(FUZZ_NAMES))
	echo $(GLUE_COMMIT) > $(BUILD)/fuzz/COMMIT

$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/tests/fuzz/fuzz_util.o $(BUILD)/glue-objs.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS) -fsanitize=fuzzer $< $(BUILD)/tests/fuzz/fuzz_util.o $(BUILD)/glue-objs.a \
	  -o $@ $(LDFLAGS_ALL) $(DEP_LIBS)

# The main job: the data, then SST-2 fine-tuned from the shipped pretrained
# encoder (models/electra-mini-wiki-185m), printing dev accuracy each epoch; last, the
# HTML report of what it ran (runs/report.html, with the committed results).
run: $(GLUE_BIN)
	./$(GLUE_BIN) data fetch all $(if $(MIRROR),--mirror $(MIRROR))
	./$(GLUE_BIN) finetune sst2 --overwrite
	./$(GLUE_BIN) report --results results --out runs/report.html

# Benchmarks against reference implementations, run on this machine in one
# invocation (results/bench_*.json); see README.
bench: $(GLUE_BIN)
	GLUE_RESULTS=results ./$(GLUE_BIN) bench fasttext
	GLUE_RESULTS=results ./$(GLUE_BIN) bench bert --config tiny
	GLUE_RESULTS=results ./$(GLUE_BIN) bench bert --config mini
	GLUE_RESULTS=results ./$(GLUE_BIN) bench bert --config small

# glue serve under wrk at 1, 8 and 64 connections vs offline predict
# (tests/serve/bench.sh): the SST-2 run `make run` trains; a quiet machine.
SERVE_RUN ?= runs/sst2/bert
bench-serve: $(GLUE_BIN)
	sh tests/serve/bench.sh $(abspath $(GLUE_BIN)) $(SERVE_RUN) results

soak-serve: $(GLUE_BIN)
	sh tests/serve/soak.sh $(abspath $(GLUE_BIN)) $(SERVE_RUN) results

clean:
	rm -rf build build-* $(GLUE_BIN)

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)
