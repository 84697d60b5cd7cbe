# lib.mk — libglue, the C library of include/glue.h (included by the Makefile).
#
#   make lib                   $(BUILD)/lib/: libglue.so.N (SONAME libglue.so.N,
#                              N = GLUE_API_VERSION), libglue.so, libglue.a, glue.pc
#   make install PREFIX=DIR    bin/glue, lib/libglue.*, include/glue.h,
#                              lib/pkgconfig/glue.pc, share/man/man1/glue.1
#   make lib-test              (part of `make test`) the example and the Python
#                              binding against an installed copy, and predictions
#                              from many threads on one handle
#   make tsan                  that threads test under ThreadSanitizer (clang)
#
# The library's objects are compiled apart ($(BUILD)/pic/): position
# independent, only glue_* exported (-fvisibility=hidden; the header marks
# them), without MPI, and with GLUE_LIBRARY (core/threads.c then does not
# re-execute the program at start). Only the layers prediction needs are in
# it: no commands, experiments, reports or pretraining.

GLUE_API_VERSION := $(shell sed -n 's/^\#define GLUE_API_VERSION \([0-9]*\).*/\1/p' include/glue.h)
LIBGLUE_SRC := $(sort $(wildcard src/lib/*.c src/core/*.c src/nn/*.c src/optim/*.c src/text/*.c src/metrics/*.c \
                 src/models/*.c src/models/*/*.c tasks/*.c src/train/*.c))
LIBGLUE_OBJ := $(LIBGLUE_SRC:%.c=$(BUILD)/pic/%.o)
LIBGLUE_API := $(BUILD)/pic/src/lib/glue_lib.o
LIBGLUE_LIBS = -fopenmp $(filter-out -lmpi %/openmpi/lib -lmicrohttpd,$(DEP_LIBS))
LIBGLUE_SO := $(BUILD)/lib/libglue.so.$(GLUE_API_VERSION)
LIBGLUE_A := $(BUILD)/lib/libglue.a
PREFIX ?= /usr/local

lib: $(LIBGLUE_SO) $(LIBGLUE_A) $(BUILD)/lib/glue.pc

$(BUILD)/pic/%.o: %.c $(BUILD)/deps.mk
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS) $(KERN_FLAGS) -fPIC -fvisibility=hidden -UGLUE_MPI -DGLUE_LIBRARY -c $< -o $@

$(LIBGLUE_A): $(LIBGLUE_OBJ)
	@mkdir -p $(dir $@) && rm -f $@
	ar rcs $@ $(LIBGLUE_OBJ)

# The API's object, and from the archive only what it needs.
$(LIBGLUE_SO): $(LIBGLUE_A)
	$(CC) -shared -Wl,-soname,libglue.so.$(GLUE_API_VERSION) -Wl,--no-undefined -o $@ $(LIBGLUE_API) $(LIBGLUE_A) \
	  $(LDFLAGS) $(LIBGLUE_LIBS)
	ln -sf libglue.so.$(GLUE_API_VERSION) $(BUILD)/lib/libglue.so

# glue.pc for prefix $(1) into file $(2).
LIBGLUE_PC = printf '%s\n' 'prefix=$(1)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' 'Name: glue' \
	  'Description: load a text classifier trained with glue and predict with it' 'Version: $(GLUE_API_VERSION)' \
	  'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lglue' 'Libs.private: $(strip $(LIBGLUE_LIBS))' > $(2)

$(BUILD)/lib/glue.pc: src/lib/lib.mk include/glue.h $(BUILD)/deps.mk FORCE
	@mkdir -p $(dir $@)
	$(call LIBGLUE_PC,$(PREFIX),$@)

# The man page: `glue --help` as it prints it.
$(BUILD)/glue.1: $(GLUE_BIN)
	set -e; { printf '.TH GLUE 1 "" "glue" "User Commands"\n.SH NAME\nglue \\- text classification and the GLUE benchmark\n'; \
	  printf '.SH DESCRIPTION\n.nf\n'; $(abspath $(GLUE_BIN)) --help | sed 's/\\/\\e/g; s/^[.'"'"']/\\\&&/'; \
	  printf '.fi\n.SH SEE ALSO\nglue COMMAND --help; the C library: include/glue.h\n'; } > $@

# The models glue uses when none is named (the encoder bert_task.h names, the
# translation model cmd_translate.c names), under PREFIX/share/glue/, where an
# installed glue finds them from any folder (core/files.h file_shipped).
SHIPPED_MODELS = $(shell sed -n 's/^\#define BERT_SHIPPED_ENCODER_DIR "\(.*\)"/\1/p' src/models/bert/bert_task.h) \
                 $(shell sed -n 's/^\#define TRANSLATE_SHIPPED_MODEL "\(.*\)"/\1/p' src/cli/cmd_translate.c)

install: $(GLUE_BIN) lib $(BUILD)/glue.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	for m in $(SHIPPED_MODELS); do \
	  install -d $(DESTDIR)$(PREFIX)/share/glue/$$m && install -m 644 $$m/* $(DESTDIR)$(PREFIX)/share/glue/$$m/ || exit 1; \
	done
	install -m 755 $(GLUE_BIN) $(DESTDIR)$(PREFIX)/bin/glue
	install -m 755 $(LIBGLUE_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libglue.so.$(GLUE_API_VERSION) $(DESTDIR)$(PREFIX)/lib/libglue.so
	install -m 644 $(LIBGLUE_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/glue.h $(DESTDIR)$(PREFIX)/include/
	$(call LIBGLUE_PC,$(PREFIX),$(DESTDIR)$(PREFIX)/lib/pkgconfig/glue.pc)
	install -m 644 $(BUILD)/glue.1 $(DESTDIR)$(PREFIX)/share/man/man1/

# Installs into a scratch prefix (its glue.pc names that prefix), then
# tests/lib/run.sh builds the example with pkg-config against it and runs
# it, the Python binding, and the threads test.
LIB_TEST_DIR = $(abspath $(BUILD))/lib-test
lib-test: $(GLUE_BIN)
	rm -rf $(LIB_TEST_DIR)
	$(MAKE) --no-print-directory PREFIX=$(LIB_TEST_DIR)/prefix install
	sh tests/lib/run.sh $(LIB_TEST_DIR) $(abspath $(GLUE_BIN))

# ThreadSanitizer: the library and the threads test built with clang
# -fsanitize=thread; any report fails the target.
TSAN_BUILD ?= build-tsan
tsan: $(GLUE_BIN)
	$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) CC=clang CFLAGS="-O1 -g -fsanitize=thread" \
	  LDFLAGS=-fsanitize=thread $(TSAN_BUILD)/lib/libglue.a
	clang -O1 -g -fsanitize=thread -Iinclude tests/lib/threads.c $(TSAN_BUILD)/lib/libglue.a -o $(TSAN_BUILD)/lib/threads \
	  -fsanitize=thread -fopenmp -lpthread $(filter-out -fopenmp,$(LIBGLUE_LIBS))
	sh tests/lib/run.sh $(abspath $(TSAN_BUILD))/lib-test $(abspath $(GLUE_BIN)) --tsan $(abspath $(TSAN_BUILD))/lib/threads

-include $(LIBGLUE_OBJ:.o=.d)
