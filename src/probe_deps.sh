#!/bin/sh
# Finds the five system libraries glue links against (pkg-config first, a test
# compile second), installs a missing one with apt-get when running as root, and
# otherwise prints the exact command to run. Writes make variables on stdout;
# human-readable findings go to stderr so `make` shows them.
# MPI (OpenMPI: libopenmpi-dev openmpi-bin) is optional: when found, glue is
# built with -DGLUE_MPI and links it (data-parallel `mpirun -np N glue
# pretrain`, src/core/dist.h); MPI=no in the environment builds without it.
set -u
CC=${CC:-cc}
missing=""
cflags=""
libs=""

# name  pkg-config-module  debian-package  header  link-flag
probe() {
    name=$1 mod=$2 pkg=$3 hdr=$4 lib=$5
    if pkg-config --exists "$mod" 2>/dev/null; then
        cflags="$cflags $(pkg-config --cflags "$mod")"
        libs="$libs $(pkg-config --libs "$mod")"
        echo "deps: $name found (pkg-config $mod $(pkg-config --modversion "$mod"))" >&2
        return 0
    fi
    tmp=$(mktemp -d)
    printf '#include <%s>\nint main(void){return 0;}\n' "$hdr" > "$tmp/t.c"
    if $CC "$tmp/t.c" -o "$tmp/t" $lib 2>/dev/null; then
        libs="$libs $lib"
        echo "deps: $name found (test compile with $lib)" >&2
        rm -rf "$tmp"; return 0
    fi
    rm -rf "$tmp"
    missing="$missing $pkg"
    return 1
}

probe_all() {
    missing=""; cflags=""; libs=""
    probe OpenBLAS openblas    libopenblas-dev  cblas.h      -lopenblas
    probe zlib     zlib        zlib1g-dev       zlib.h       -lz
    probe utf8proc libutf8proc libutf8proc-dev  utf8proc.h   -lutf8proc
    probe cJSON    libcjson    libcjson-dev     cjson/cJSON.h -lcjson
    probe libmicrohttpd libmicrohttpd libmicrohttpd-dev microhttpd.h -lmicrohttpd   # glue serve
}

probe_all
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "deps: installing$missing (apt-get, as root)" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q pkg-config $missing >&2 ||
        { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q pkg-config $missing >&2; }
        probe_all
    fi
    if [ -n "$missing" ]; then
        echo "deps: missing:$missing" >&2
        echo "deps: run:  sudo apt-get install -y pkg-config$missing" >&2
        exit 1
    fi
fi
# Optional: MPI. pkg-config ompi first, then the compiler wrapper's flags.
if [ "${MPI:-auto}" != no ]; then
    if pkg-config --exists ompi 2>/dev/null; then
        cflags="$cflags -DGLUE_MPI $(pkg-config --cflags ompi)"
        libs="$libs $(pkg-config --libs ompi)"
        echo "deps: MPI found (pkg-config ompi $(pkg-config --modversion ompi)): data-parallel training on" >&2
    elif command -v mpicc >/dev/null 2>&1 && mpicc --showme:compile >/dev/null 2>&1; then
        cflags="$cflags -DGLUE_MPI $(mpicc --showme:compile)"
        libs="$libs $(mpicc --showme:link)"
        echo "deps: MPI found (mpicc): data-parallel training on" >&2
    else
        echo "deps: MPI not found: single-process build (apt-get install libopenmpi-dev openmpi-bin for mpirun)" >&2
    fi
else
    echo "deps: MPI=no: single-process build" >&2
fi
echo "DEP_CFLAGS =$cflags"
echo "DEP_LIBS =$libs -lm"
