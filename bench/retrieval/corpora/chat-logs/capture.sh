#!/usr/bin/env bash
# capture.sh -- how the logs under corpus/logs/ were captured (part (b) of the
# chat-logs corpus).  They are REAL outputs of running the commands below on a
# Debian 12 (bookworm) x86_64 machine with 2 cores:
#   python 3.11.7 (pyenv), pip 23.2.1, gcc 12.2.0, GNU make 4.3, cmake 3.25.1,
#   ninja 1.11.1, go 1.19.8, cargo/rustc 1.95.0, node v20.20.2, npm 11.19.1.
# Network: only PyPI, Debian apt and the npm registry were reachable.
#
# Usage:  bash capture.sh [WORKDIR] [OUTDIR]          (all steps)
#         STEP=pip bash capture.sh [WORKDIR] [OUTDIR] (one step)
#   WORKDIR defaults to /tmp/work/cap, OUTDIR to ./corpus/logs
#   Steps, in the order they were run for the committed logs:
#     pip, make, cargo, go, cmake, lint, npm, apt, pytest, more, more2
#   ("more" reuses the cmake project, "more2" the pytest venv and sdists).
# Needs network access to PyPI, the npm registry and Debian apt only.
# Nothing in a log is stripped or edited; each log starts with the command
# line ("$ ...") and ends with a line "[exit status N]" written by run().
# Timings, temp paths and download sizes differ from run to run, which is why
# the captured logs are committed and build.py only copies them.
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
W="${1:-/tmp/work/cap}"
OUT="${2:-$HERE/corpus/logs}"
mkdir -p "$W" "$OUT"
export TZ=UTC LC_ALL=C.UTF-8 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1

# run LOGFILE DIR CMD...   -- run CMD in DIR, log stdout+stderr to OUT/LOGFILE
run() {
  local log="$OUT/$1" dir="$2"; shift 2
  {
    echo "\$ $*"
    ( cd "$dir" && eval "$@" ) 2>&1
    echo "[exit status $?]"
  } > "$log"
}

step="${STEP:-all}"
want() { [ "$step" = all ] || [ "$step" = "$1" ]; }

# ---------------------------------------------------------------- pip builds
if want pip; then
  for v in markupsafe pyyaml541 mysqlclient cffi psycopg2; do
    rm -rf "$W/venv-$v"; python3 -m venv "$W/venv-$v"
  done
  run pip-install-markupsafe-no-binary.log "$W" \
    "$W/venv-markupsafe/bin/pip install -v --no-binary :all: markupsafe==2.1.5"
  run pip-install-pyyaml-5.4.1-from-source.log "$W" \
    "$W/venv-pyyaml541/bin/pip install -v --no-binary pyyaml pyyaml==5.4.1"
  run pip-install-mysqlclient.log "$W" \
    "$W/venv-mysqlclient/bin/pip install -v mysqlclient==2.2.4"
  run pip-install-cffi-no-binary.log "$W" \
    "$W/venv-cffi/bin/pip install -v --no-binary cffi,pycparser cffi==1.16.0"
  run pip-install-psycopg2-no-binary.log "$W" \
    "$W/venv-psycopg2/bin/pip install -v --no-binary :all: psycopg2==2.9.9"
fi

# ------------------------------------------------------- test suites (pytest)
if want pytest; then
  rm -rf "$W/pt"; mkdir -p "$W/pt"; python3 -m venv "$W/pt/venv"
  P="$W/pt/venv/bin"
  "$P/pip" install -q pytest==8.1.1 hypothesis==6.100.1 freezegun==1.4.0 >/dev/null
  ( cd "$W/pt" && "$P/pip" download -q --no-deps --no-binary :all: \
      more-itertools==10.2.0 python-dateutil==2.9.0.post0 tabulate==0.9.0 )
  for f in "$W"/pt/*.tar.gz; do tar -xzf "$f" -C "$W/pt"; done
  run pytest-more-itertools-10.2.0.log "$W/pt/more-itertools-10.2.0" \
    "$P/pip install -q . && $P/python -m pytest -v -p no:cacheprovider tests"
  run pytest-python-dateutil-2.9.0.log "$W/pt/python-dateutil-2.9.0.post0" \
    "$P/pip install -q . && $P/python -m pytest -v -p no:cacheprovider --durations=15 tests"
  run pytest-tabulate-0.9.0.log "$W/pt/tabulate-0.9.0" \
    "$P/pip install -q . && $P/python -m pytest -v -rs -p no:cacheprovider test"
fi

# --------------------------------------------------- make: small C project
if want make; then
  D="$W/tinykv"; rm -rf "$D"; mkdir -p "$D/src" "$D/include" "$D/tests"
  cat > "$D/Makefile" <<'MK'
CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -Wall -Wextra -Iinclude
LDLIBS  += -lm
OBJ      = build/hash.o build/store.o build/crc32.o build/main.o

all: build/tinykv

build:
	mkdir -p build

build/%.o: src/%.c include/tinykv.h | build
	$(CC) $(CFLAGS) -c $< -o $@

build/tinykv: $(OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

build/test_store: tests/test_store.c build/hash.o build/store.o build/crc32.o
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

test: build/test_store
	./build/test_store

clean:
	rm -rf build

.PHONY: all test clean
MK
  cat > "$D/include/tinykv.h" <<'H'
#ifndef TINYKV_H
#define TINYKV_H
#include <stddef.h>
#include <stdint.h>

#define TKV_BUCKETS 1024

struct entry {
    char *key;
    char *value;
    size_t klen;
    struct entry *next;
};

struct store {
    struct entry *buckets[TKV_BUCKETS];
    size_t count;
};

uint32_t tkv_hash(const char *key, size_t len);
uint32_t crc32_update(uint32_t crc, const void *buf, size_t len);
struct store *store_open(void);
int store_put(struct store *s, const char *key, const char *value);
const char *store_get(struct store *s, const char *key);
int store_del(struct store *s, const char *key);
int store_dump(struct store *s, const char *path);
void store_close(struct store *s);
#endif
H
  cat > "$D/src/hash.c" <<'C'
#include "tinykv.h"

/* FNV-1a, 32 bit */
uint32_t tkv_hash(const char *key, size_t len)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 16777619u;
    }
    return h;
}
C
  cat > "$D/src/crc32.c" <<'C'
#include "tinykv.h"

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}
C
  cat > "$D/src/store.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tinykv.h"

struct store *store_open(void)
{
    return calloc(1, sizeof(struct store));
}

static struct entry **slot(struct store *s, const char *key, size_t klen)
{
    struct entry **e = &s->buckets[tkv_hash(key, klen) % TKV_BUCKETS];
    while (*e && ((*e)->klen != klen || memcmp((*e)->key, key, klen) != 0))
        e = &(*e)->next;
    return e;
}

int store_put(struct store *s, const char *key, const char *value)
{
    size_t klen = strlen(key);
    struct entry **e = slot(s, key, klen);
    if (*e) {
        free((*e)->value);
        (*e)->value = strdup(value);
        return 0;
    }
    struct entry *n = malloc(sizeof *n);
    if (!n)
        return -1;
    n->key = strdup(key);
    n->value = strdup(value);
    n->klen = klen;
    n->next = NULL;
    *e = n;
    s->count++;
    return 1;
}

const char *store_get(struct store *s, const char *key)
{
    struct entry **e = slot(s, key, strlen(key));
    return *e ? (*e)->value : NULL;
}

int store_del(struct store *s, const char *key)
{
    struct entry **e = slot(s, key, strlen(key));
    if (!*e)
        return 0;
    struct entry *dead = *e;
    *e = dead->next;
    free(dead->key);
    free(dead->value);
    free(dead);
    s->count--;
    return 1;
}

int store_dump(struct store *s, const char *path)
{
    FILE *f = fopen(path, "w");
    uint32_t crc = 0;
    if (!f)
        return -1;
    for (int b = 0; b < TKV_BUCKETS; b++)
        for (struct entry *e = s->buckets[b]; e; e = e->next) {
            fprintf(f, "%s\t%s\n", e->key, e->value);
            crc = crc32_update(crc, e->key, e->klen);
        }
    fprintf(f, "#crc32=%08x count=%zu\n", crc, s->count);
    return fclose(f);
}

void store_close(struct store *s)
{
    for (int b = 0; b < TKV_BUCKETS; b++) {
        struct entry *e = s->buckets[b];
        while (e) {
            struct entry *next = e->next;
            free(e->key);
            free(e->value);
            free(e);
            e = next;
        }
    }
    free(s);
}
C
  cat > "$D/src/main.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "tinykv.h"

static void usage(const char *argv0, int verbose)
{
    fprintf(stderr, "usage: %s put KEY VALUE | get KEY | del KEY\n", argv0);
}

int main(int argc, char **argv)
{
    struct store *s = store_open();
    int rc = 0;
    if (argc < 3) {
        usage(argv[0], 0);
        return 2;
    }
    if (strcmp(argv[1], "put") == 0 && argc == 4)
        rc = store_put(s, argv[2], argv[3]) < 0;
    else if (strcmp(argv[1], "get") == 0) {
        const char *v = store_get(s, argv[2]);
        if (v) puts(v); else rc = 1;
    } else if (strcmp(argv[1], "del") == 0)
        rc = !store_del(s, argv[2]);
    else {
        usage(argv[0], 1);
        rc = 2;
    }
    store_close(s);
    return rc;
}
C
  cat > "$D/tests/test_store.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "tinykv.h"

static int failures, checks;
#define CHECK(cond) do { checks++; if (!(cond)) { failures++; \
    printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

int main(void)
{
    struct store *s = store_open();
    char k[32];
    CHECK(store_put(s, "alpha", "1") == 1);
    CHECK(store_put(s, "alpha", "2") == 0);
    CHECK(strcmp(store_get(s, "alpha"), "2") == 0);
    for (int i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "key-%d", i);
        store_put(s, k, k);
    }
    CHECK(s->count == 5001);
    CHECK(store_del(s, "key-42") == 1);
    CHECK(store_get(s, "key-42") == NULL);
    CHECK(store_dump(s, "build/dump.tsv") == 0);
    CHECK(crc32_update(0, "123456789", 9) == 0xCBF43926u);
    CHECK(tkv_hash("", 0) == 2166136261u);
    store_close(s);
    printf("%d checks, %d failures\n", checks, failures);
    return failures != 0;
}
C
  run make-tinykv-build-and-test.log "$D" "make clean && make && make test && ls -l build"
  # broken variant: field renamed in the header, crc32.c dropped from OBJ
  cp -r "$D" "$D-broken"; rm -rf "$D-broken/build"
  sed -i 's/    size_t klen;/    size_t key_len;/' "$D-broken/include/tinykv.h"
  sed -i 's# build/crc32.o build/main.o# build/main.o#' "$D-broken/Makefile"
  run make-tinykv-broken-header.log "$D-broken" "make -k CFLAGS='-O2 -g'"
  sed -i 's/    size_t key_len;/    size_t klen;/' "$D-broken/include/tinykv.h"
  run make-tinykv-link-error.log "$D-broken" "make V=1"
fi

# ------------------------------------------------------------ cargo (Rust)
if want cargo; then
  export CARGO_TERM_COLOR=never
  D="$W/csvstat"; rm -rf "$D"; mkdir -p "$D/src"
  cat > "$D/Cargo.toml" <<'T'
[package]
name = "csvstat"
version = "0.3.0"
edition = "2021"

[dependencies]
T
  cat > "$D/src/main.rs" <<'R'
use std::collections::HashMap;
use std::env;
use std::fs;

#[derive(Debug)]
struct ColumnStats {
    name: String,
    count: usize,
    sum: f64,
    min: f64,
    max: f64,
}

fn parse_header(line: &str) -> Vec<String> {
    line.split(',').map(|s| s.trim().to_string()).collect()
}

fn mean(stats: &ColumnStats) -> f64 {
    if stats.count == 0 {
        return 0;
    }
    stats.sum / stats.count as f64
}

fn main() {
    let path = env::args().nth(1).expect("usage: csvstat FILE");
    let text = fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    let header = parse_header(lines.next().unwrap_or(""));
    let mut stats: HashMap<usize, ColumnStats> = HashMap::new();
    for line in lines {
        for (i, field) in line.split(',').enumerate() {
            let v: f64 = match field.trim().parse() {
                Ok(v) => v,
                Err(_) => continue,
            };
            let e = stats.entry(i).or_insert(ColumnStats {
                name: header[i],
                count: 0,
                sum: 0.0,
                min: f64::MAX,
                max: f64::MIN,
            });
            e.count += 1;
            e.sum += v;
            e.min = e.min.min(v);
            e.max = e.max.max(v);
        }
    }
    let report = header;
    for (i, name) in header.iter().enumerate() {
        if let Some(s) = stats.get(&i) {
            println!("{name}: n={} mean={:.3} min={} max={}", s.count, mean(s), s.min, s.max);
        }
    }
    let unused_total = stats.len();
}
R
  run cargo-build-csvstat-errors.log "$D" "cargo build"
  D="$W/slugify"; rm -rf "$D"; mkdir -p "$D/src"
  cat > "$D/Cargo.toml" <<'T'
[package]
name = "slugify"
version = "0.1.0"
edition = "2021"

[dependencies]
T
  cat > "$D/src/lib.rs" <<'R'
//! Turn titles into URL slugs.

/// Lower-case, replace runs of non-alphanumerics by a single `-`, trim dashes.
pub fn slugify(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut dash = false;
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
            dash = false;
        } else if !dash && !out.is_empty() {
            out.push('-');
            dash = true;
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

/// Truncate a slug to at most `max` bytes without cutting a word in half.
pub fn truncate(slug: &str, max: usize) -> &str {
    if slug.len() <= max {
        return slug;
    }
    match slug[..max].rfind('-') {
        Some(i) => &slug[..i],
        None => &slug[..max],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic() {
        assert_eq!(slugify("Hello, World!"), "hello-world");
    }

    #[test]
    fn collapses_runs() {
        assert_eq!(slugify("a  --  b"), "a-b");
    }

    #[test]
    fn keeps_accented_letters() {
        assert_eq!(slugify("Crème Brûlée recipe"), "creme-brulee-recipe");
    }

    #[test]
    fn truncate_on_word_boundary() {
        assert_eq!(truncate("the-quick-brown-fox", 12), "the-quick");
    }

    #[test]
    fn truncate_short() {
        assert_eq!(truncate("abc", 10), "abc");
    }

    #[test]
    fn truncate_multibyte() {
        let s = "ünïcödé-title";
        assert_eq!(truncate(s, 3), "ün");
    }
}
R
  run cargo-test-slugify-failures.log "$D" "cargo test"
fi

# ------------------------------------------------------------------ go test
if want go; then
  D="$W/ratelimit"; rm -rf "$D"; mkdir -p "$D/bucket"
  export GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
  cat > "$D/go.mod" <<'G'
module example.com/ratelimit

go 1.19
G
  cat > "$D/bucket/bucket.go" <<'G'
// Package bucket implements a token-bucket rate limiter.
package bucket

import (
	"sync"
	"time"
)

// Bucket refills Rate tokens per second up to Burst.
type Bucket struct {
	mu     sync.Mutex
	Rate   float64
	Burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
}

// New returns a full bucket.
func New(rate, burst float64) *Bucket {
	return &Bucket{Rate: rate, Burst: burst, tokens: burst, now: time.Now, last: time.Now()}
}

func (b *Bucket) refill() {
	t := b.now()
	elapsed := t.Sub(b.last).Seconds()
	b.last = t
	b.tokens += elapsed * b.Rate
	if b.tokens > b.Burst {
		b.tokens = b.Burst
	}
}

// Allow takes one token if available.
func (b *Bucket) Allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// Wait returns how long until n tokens are available.
func (b *Bucket) Wait(n float64) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	missing := n - b.tokens
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / b.Rate * float64(time.Second))
}
G
  cat > "$D/bucket/bucket_test.go" <<'G'
package bucket

import (
	"sync"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func newFake(rate, burst float64) (*Bucket, *fakeClock) {
	c := &fakeClock{t: time.Unix(1700000000, 0)}
	b := New(rate, burst)
	b.now = c.Now
	b.last = c.t
	return b, c
}

func TestBurst(t *testing.T) {
	b, _ := newFake(1, 5)
	for i := 0; i < 5; i++ {
		if !b.Allow() {
			t.Fatalf("request %d denied inside burst", i)
		}
	}
	if b.Allow() {
		t.Fatal("6th request allowed, want denied")
	}
}

func TestRefill(t *testing.T) {
	b, c := newFake(2, 2)
	b.Allow()
	b.Allow()
	c.Advance(500 * time.Millisecond)
	if !b.Allow() {
		t.Error("want 1 token after 500ms at 2/s")
	}
}

func TestWait(t *testing.T) {
	b, _ := newFake(4, 4)
	for i := 0; i < 4; i++ {
		b.Allow()
	}
	if got, want := b.Wait(2), 500*time.Millisecond; got != want {
		t.Errorf("Wait(2) = %v, want %v", got, want)
	}
}

func TestWaitFractional(t *testing.T) {
	b, _ := newFake(3, 3)
	for i := 0; i < 3; i++ {
		b.Allow()
	}
	if got, want := b.Wait(1), 333*time.Millisecond; got != want {
		t.Errorf("Wait(1) = %v, want %v", got, want)
	}
}

func TestConcurrentAllow(t *testing.T) {
	b, _ := newFake(0, 100)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 4; j++ {
				if b.Allow() {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 100 {
		t.Errorf("allowed = %d, want 100", allowed)
	}
}
G
  run go-test-ratelimit.log "$D" "go vet ./... ; go test -v -count=1 ./..."
  run go-test-race-ratelimit.log "$D" "go test -race -count=1 -run 'TestConcurrent|TestBurst' -v ./..."
fi

# ----------------------------------------------- cmake + ninja: C++ project
if want cmake; then
  D="$W/imgthumb"; rm -rf "$D"; mkdir -p "$D/src" "$D/include/imgthumb"
  cat > "$D/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(imgthumb VERSION 0.4.1 LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
option(IMGTHUMB_WERROR "Treat warnings as errors" OFF)
find_package(Threads REQUIRED)
find_package(PNG)
add_library(imgthumb src/resize.cpp src/ppm.cpp)
target_include_directories(imgthumb PUBLIC include)
target_compile_options(imgthumb PRIVATE -Wall -Wextra)
if(IMGTHUMB_WERROR)
  target_compile_options(imgthumb PRIVATE -Werror)
endif()
add_executable(thumb src/main.cpp)
target_link_libraries(thumb PRIVATE imgthumb Threads::Threads)
CM
  cat > "$D/include/imgthumb/image.hpp" <<'H'
#pragma once
#include <string>
#include <vector>

namespace imgthumb {
struct Image {
    int width = 0, height = 0;
    std::vector<uint8_t> rgb;   // width*height*3
};
Image load_ppm(const std::string &path);
void save_ppm(const Image &img, const std::string &path);
Image resize_box(const Image &src, int w, int h);
}
H
  cat > "$D/src/ppm.cpp" <<'CPP'
#include "imgthumb/image.hpp"
#include <fstream>
#include <stdexcept>

namespace imgthumb {
Image load_ppm(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::string magic; int maxval;
    Image img;
    in >> magic >> img.width >> img.height >> maxval;
    if (magic != "P6") throw std::runtime_error("not a P6 ppm: " + path);
    in.get();
    img.rgb.resize(size_t(img.width) * img.height * 3);
    in.read(reinterpret_cast<char *>(img.rgb.data()), img.rgb.size());
    return img;
}
void save_ppm(const Image &img, const std::string &path) {
    std::ofstream out(path, std::ios::binary);
    out << "P6\n" << img.width << " " << img.height << "\n255\n";
    out.write(reinterpret_cast<const char *>(img.rgb.data()), img.rgb.size());
}
}
CPP
  cat > "$D/src/resize.cpp" <<'CPP'
#include "imgthumb/image.hpp"

namespace imgthumb {
Image resize_box(const Image &src, int w, int h) {
    Image dst; dst.width = w; dst.height = h;
    dst.rgb.assign(size_t(w) * h * 3, 0);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int sx0 = x * src.width / w, sx1 = (x + 1) * src.width / w;
            int sy0 = y * src.height / h, sy1 = (y + 1) * src.height / h;
            for (int c = 0; c < 3; ++c) {
                unsigned sum = 0, n = 0;
                for (int sy = sy0; sy < sy1; ++sy)
                    for (int sx = sx0; sx < sx1; ++sx, ++n)
                        sum += src.rgb[(size_t(sy) * src.width + sx) * 3 + c];
                dst.rgb[(size_t(y) * w + x) * 3 + c] = n ? sum / n : 0;
            }
        }
    return dst;
}
}
CPP
  cat > "$D/src/main.cpp" <<'CPP'
#include "imgthumb/image.hpp"
#include <iostream>
#include <thread>

int main(int argc, char **argv) {
    if (argc != 5) { std::cerr << "usage: thumb IN.ppm OUT.ppm W H\n"; return 2; }
    auto img = imgthumb::load_ppm(argv[1]);
    auto out = imgthumb::resize_box(img, std::stoi(argv[3]), std::stoi(argv[4]));
    imgthumb::save_ppm(out, argv[2]);
    std::cout << img.width << "x" << img.height << " -> " << out.width << "x" << out.height << "\n";
}
CPP
  run cmake-imgthumb-configure-build.log "$D" \
    "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMGTHUMB_WERROR=ON && cmake --build build --verbose"
fi

# ------------------------------------------------------------------- npm
if want npm; then
  D="$W/npm-dashboard"; rm -rf "$D"; mkdir -p "$D"
  cat > "$D/package.json" <<'J'
{
  "name": "ops-dashboard",
  "version": "0.9.0",
  "private": true,
  "dependencies": {
    "react": "^17.0.2",
    "react-dom": "^17.0.2",
    "@testing-library/react": "^14.1.2",
    "chart.js": "^4.4.1"
  }
}
J
  run npm-install-eresolve-react17.log "$D" "npm install --no-fund --no-audit --loglevel=http"
  D="$W/npm-api"; rm -rf "$D"; mkdir -p "$D"
  cat > "$D/package.json" <<'J'
{
  "name": "billing-api",
  "version": "1.2.0",
  "private": true,
  "dependencies": {
    "express": "4.17.1",
    "jsonwebtoken": "8.5.1",
    "lodash": "^5.0.0"
  }
}
J
  run npm-install-etarget-lodash.log "$D" "npm install --no-fund"
  sed -i 's/"lodash": "\^5.0.0"/"lodash": "4.17.15"/' "$D/package.json"
  run npm-install-audit-billing-api.log "$D" "npm install --no-fund && npm audit; npm ls --depth=0"
fi

# ---------------------------------------------------------- apt-get -s
if want apt; then
  apt-get -o DPkg::Lock::Timeout=600 update >/dev/null 2>&1
  run apt-get-s-nginx.log / "apt-get -o DPkg::Lock::Timeout=600 install -s nginx"
  run apt-get-s-build-deps.log / "apt-get -o DPkg::Lock::Timeout=600 install -s build-essential libssl-dev libffi-dev python3-dev libxml2-dev libxslt1-dev zlib1g-dev"
  run apt-get-s-libmysqlclient-dev.log / "apt-get -o DPkg::Lock::Timeout=600 install -s libmysqlclient-dev; apt-cache policy default-libmysqlclient-dev; apt-get -o DPkg::Lock::Timeout=600 install -s default-libmysqlclient-dev pkg-config"
fi

# ------------------------------------------------- lint/type check (ruff, mypy)
if want lint; then
  D="$W/invoicer"; rm -rf "$D"; mkdir -p "$D/invoicer"
  python3 -m venv "$D/.venv"
  "$D/.venv/bin/pip" install -q ruff==0.4.4 mypy==1.10.0 >/dev/null
  cat > "$D/pyproject.toml" <<'T'
[project]
name = "invoicer"
version = "0.2.0"
requires-python = ">=3.10"

[tool.ruff]
line-length = 100
[tool.ruff.lint]
select = ["E", "F", "W", "I", "B", "UP", "SIM"]

[tool.mypy]
strict = true
T
  cat > "$D/invoicer/__init__.py" <<'P'
P
  cat > "$D/invoicer/models.py" <<'P'
from dataclasses import dataclass, field
from decimal import Decimal
from typing import List, Optional
import datetime


@dataclass
class LineItem:
    description: str
    quantity: int
    unit_price: Decimal
    vat_rate: Decimal = Decimal("0.20")

    def net(self) -> Decimal:
        return self.unit_price * self.quantity

    def gross(self):
        return self.net() * (1 + self.vat_rate)


@dataclass
class Invoice:
    number: str
    customer: str
    issued: datetime.date
    items: List[LineItem] = field(default_factory=list)
    paid_on: Optional[datetime.date] = None

    def total(self) -> Decimal:
        return sum(i.gross() for i in self.items)

    def is_overdue(self, today: datetime.date, days=30) -> bool:
        if self.paid_on == None:
            return (today - self.issued).days > days
        else:
            return False
P
  cat > "$D/invoicer/render.py" <<'P'
import json
import os, sys
from decimal import Decimal

from invoicer.models import Invoice, LineItem


def to_dict(inv: Invoice) -> dict:
    return {
        "number": inv.number,
        "customer": inv.customer,
        "issued": inv.issued.isoformat(),
        "items": [{"description": i.description, "qty": i.quantity, "unit": str(i.unit_price)} for i in inv.items],
        "total": str(inv.total()),
    }


def write_json(inv: Invoice, path: str, indent: int = None) -> None:
    with open(path, "w") as f:
        json.dump(to_dict(inv), f, indent=indent)


def parse_items(rows: list[dict]) -> list[LineItem]:
    items = []
    for r in rows:
        try:
            items.append(LineItem(r["description"], int(r["qty"]), Decimal(r["unit"])))
        except:
            print("skipping bad row", r, file=sys.stderr)
    return items


def load(path):
    data = json.load(open(path))
    return data
P
  run ruff-check-invoicer.log "$D" ".venv/bin/ruff --version && .venv/bin/ruff check --output-format=full invoicer"
  run mypy-strict-invoicer.log "$D" ".venv/bin/mypy --version && .venv/bin/mypy invoicer"
fi

# --------------------------------------------- larger logs (second round)
if want more; then
  # cmake: same project, a stray unused variable turns into an error under -Werror
  D="$W/imgthumb"
  sed -i 's|    Image dst; dst.width = w; dst.height = h;|    Image dst; dst.width = w; dst.height = h;\n    int scale = src.width / w;|' "$D/src/resize.cpp"
  run cmake-imgthumb-werror.log "$D" "cmake --build build"
  # lxml and pillow from source (C extensions, long compiler output)
  rm -rf "$W/venv-lxml" "$W/venv-pillow"
  python3 -m venv "$W/venv-lxml"; python3 -m venv "$W/venv-pillow"
  run pip-install-lxml-5.2.2-from-source.log "$W" \
    "$W/venv-lxml/bin/pip install -v --no-binary lxml lxml==5.2.2"
  run pip-install-pillow-10.3.0-from-source.log "$W" \
    "$W/venv-pillow/bin/pip install -v --no-binary pillow pillow==10.3.0"
  # a big, old npm project: deprecation warnings, audit summary
  D="$W/npm-legacy-cra"; rm -rf "$D"; mkdir -p "$D"
  cat > "$D/package.json" <<'J'
{
  "name": "partner-portal",
  "version": "2.3.0",
  "private": true,
  "dependencies": {
    "react": "17.0.2",
    "react-dom": "17.0.2",
    "react-scripts": "4.0.3"
  }
}
J
  run npm-install-partner-portal-react-scripts4.log "$D" "npm install --no-fund --loglevel=http"
  # apt simulation of a large install
  run apt-get-s-texlive-latex-extra.log / "apt-get -o DPkg::Lock::Timeout=600 install -s texlive-latex-extra"
fi

# ------------------------------------------------------------ third round
if want more2; then
  P="$W/pt/venv/bin"
  # dateutil's suite crashed at collection above (PytestUnknownMarkWarning
  # for pytest.mark.no_cover, turned into an error by its filterwarnings);
  # with pytest-cov installed the mark is known and the suite runs.
  "$P/pip" install -q pytest-cov==5.0.0 >/dev/null
  run pytest-python-dateutil-2.9.0-with-pytest-cov.log "$W/pt/python-dateutil-2.9.0.post0" \
    "$P/python -m pytest -v -p no:cacheprovider --durations=15 tests"
  ( cd "$W/pt" && "$P/pip" download -q --no-deps --no-binary :all: attrs==23.2.0 && tar -xzf attrs-23.2.0.tar.gz )
  run pytest-attrs-23.2.0.log "$W/pt/attrs-23.2.0" \
    "$P/pip install -q . && $P/python -m pytest -v -p no:cacheprovider -x --durations=10 tests"
  rm -rf "$W/venv-pyyaml601"; python3 -m venv "$W/venv-pyyaml601"
  run pip-install-pyyaml-6.0.1-from-source.log "$W" \
    "$W/venv-pyyaml601/bin/pip install -v --no-binary pyyaml pyyaml==6.0.1 && $W/venv-pyyaml601/bin/python -c 'import yaml; print(yaml.__version__, yaml.__with_libyaml__)'"
  run apt-get-s-default-jdk.log / "apt-get -o DPkg::Lock::Timeout=600 install -s default-jdk maven"
fi
