# glue — build, test and run. `make` builds ./glue; `make test` builds and runs
# every test; `make run` fetches the data and runs the main job; `make asan`
# builds and tests under AddressSanitizer + UndefinedBehaviorSanitizer.
# BUILD=dir keeps object files apart (e.g. for parallel work or sanitizers).
# MPI=no builds without MPI even where it is installed (src/probe_deps.sh).

BUILD   ?= build
CC      ?= cc
OPT     ?= -O2 -march=native
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Wno-unused-parameter
CPPFLAGS_ALL = -std=c11 -D_GNU_SOURCE -Isrc -I. $(WARN) -fopenmp -MMD -MP $(DEP_CFLAGS)
LDFLAGS_ALL  = -fopenmp $(LDFLAGS)
MPI     ?= auto
SHARED  ?= $(or $(GLUE_SHARED),../shared)
MIRROR  ?= $(if $(wildcard $(SHARED)/data),$(SHARED)/data,)

-include $(BUILD)/deps.mk

LIB_SRC  := $(sort $(wildcard src/*/*.c tasks/*.c eval/*.c eval/*/*.c pretrain/*.c data/*.c))
TEST_SRC := $(sort $(wildcard tests/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(BUILD)/src/main.o
GLUE_BIN ?= glue

.PHONY: all test run asan bench clean deps
all: $(GLUE_BIN)

$(BUILD)/deps.mk: src/probe_deps.sh
	@mkdir -p $(BUILD)
	@CC="$(CC)" MPI="$(MPI)" sh src/probe_deps.sh > $@.tmp && mv $@.tmp $@

$(GLUE_BIN): $(BUILD)/deps.mk $(MAIN_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) $(MAIN_OBJ) $(LIB_OBJ) -o $@ $(LDFLAGS_ALL) $(DEP_LIBS)

$(BUILD)/glue_tests: $(BUILD)/deps.mk $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(CFLAGS) $(TEST_OBJ) $(LIB_OBJ) -o $@ $(LDFLAGS_ALL) $(DEP_LIBS)

$(BUILD)/%.o: %.c $(BUILD)/deps.mk
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS) -c $< -o $@

# The tests call ./glue for the CLI checks and the PyTorch references; GLUE_BIN
# tells them which binary this build produced.
test: $(GLUE_BIN) $(BUILD)/glue_tests
	GLUE_BIN=./$(GLUE_BIN) $(BUILD)/glue_tests $(T)

asan:
	$(MAKE) BUILD=build-asan GLUE_BIN=build-asan/glue \
	  CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  LDFLAGS="-fsanitize=address,undefined" test

# The main job: the data, then SST-2 fine-tuned from the shipped pretrained
# encoder (models/bert-tiny-wiki), printing dev accuracy each epoch.
run: $(GLUE_BIN)
	./$(GLUE_BIN) data fetch all $(if $(MIRROR),--mirror $(MIRROR))
	./$(GLUE_BIN) finetune sst2

# Benchmarks against reference implementations, run on this machine in one
# invocation (results/bench_*.json); see README.
bench: $(GLUE_BIN)
	./$(GLUE_BIN) bench fasttext
	./$(GLUE_BIN) bench bert --config tiny
	./$(GLUE_BIN) bench bert --config mini
	./$(GLUE_BIN) bench bert --config small

clean:
	rm -rf build build-* $(GLUE_BIN)

-include $(LIB_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)
