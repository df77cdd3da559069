// Benchmark harness for toml++ 3.3.0 (Debian libtomlplusplus-dev), the
// yardstick for gpuop's parser. Same interface and output as toml_bench.c:
//
//   tomlpp_bench --time FILE   warm-up parse, then BENCH_RUNS (default 5) timed
//                              parses; prints bytes runs median min (seconds,
//                              toml::parse() only) and the tree fingerprint
//                              (nodes keybytes strbytes intsum)
//   tomlpp_bench --peak FILE   parse once; prints bytes maxrss_kib
//
// toml++ is used header-only (TOML_HEADER_ONLY=1, its default), so the parser
// is compiled by run.sh with g++ -O2 -DNDEBUG (its internal assertions off,
// as in a release build) rather than taken from Debian's prebuilt .so. A parse error exits 1, usage
// and I/O errors exit 2.
//
// Built by run.sh: g++ -O2 -std=c++17 bench/tomlpp_bench.cpp
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace
{

const char *prog = "tomlpp_bench";

std::string read_file(const char *path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "%s: %s: %s\n", prog, path, std::strerror(errno));
        std::exit(2);
    }
    in.seekg(0, std::ios::end);
    std::streamoff n = in.tellg();
    in.seekg(0, std::ios::beg);
    std::string data(static_cast<size_t>(n), '\0');
    if (n > 0 && !in.read(data.data(), n)) {
        std::fprintf(stderr, "%s: %s: read error\n", prog, path);
        std::exit(2);
    }
    return data;
}

int bench_runs()
{
    const char *s = std::getenv("BENCH_RUNS");
    if (!s || !*s) return 5;
    char *end;
    long v = std::strtol(s, &end, 10);
    if (*end || v < 1 || v > 100000) {
        std::fprintf(stderr, "%s: BENCH_RUNS must be a positive integer, got '%s'\n", prog, s);
        std::exit(2);
    }
    return static_cast<int>(v);
}

double now()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

toml::table parse_or_die(std::string_view src, const char *path)
{
    try {
        return toml::parse(src, std::string_view(path));
    } catch (const toml::parse_error &e) {
        const auto &b = e.source().begin;
        std::fprintf(stderr, "%s: parse failed: %s:%u:%u: %.*s\n", prog, path,
                     static_cast<unsigned>(b.line), static_cast<unsigned>(b.column),
                     static_cast<int>(e.description().size()), e.description().data());
        std::exit(1);
    }
}

struct Stats {
    uint64_t nodes = 0, keybytes = 0, strbytes = 0, intsum = 0;
};

void walk(const toml::node &n, Stats &st)
{
    st.nodes++;
    if (const toml::table *t = n.as_table()) {
        for (auto &&[k, v] : *t) {
            st.keybytes += k.str().size();
            walk(v, st);
        }
    } else if (const toml::array *a = n.as_array()) {
        for (const toml::node &e : *a)
            walk(e, st);
    } else if (const auto *s = n.as_string()) {
        st.strbytes += s->get().size();
    } else if (const auto *i = n.as_integer()) {
        st.intsum += static_cast<uint64_t>(i->get());
    }
}

int do_time(const char *path)
{
    const int runs = bench_runs();
    const std::string src = read_file(path);
    Stats st;
    {
        toml::table doc = parse_or_die(src, path); // warm-up, not timed
        walk(doc, st);
    }
    std::vector<double> t;
    for (int i = 0; i < runs; i++) {
        double t0 = now();
        toml::table doc = parse_or_die(src, path);
        t.push_back(now() - t0); // the table is destroyed after the clock stops
    }
    std::sort(t.begin(), t.end());
    double median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    std::printf("bytes=%zu runs=%d median=%.9f min=%.9f nodes=%llu keybytes=%llu "
                "strbytes=%llu intsum=%llu\n",
                src.size(), runs, median, t[0], static_cast<unsigned long long>(st.nodes),
                static_cast<unsigned long long>(st.keybytes),
                static_cast<unsigned long long>(st.strbytes),
                static_cast<unsigned long long>(st.intsum));
    return 0;
}

int do_peak(const char *path)
{
    const std::string src = read_file(path);
    toml::table doc = parse_or_die(src, path);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru); // ru_maxrss is a high-water mark
    std::printf("bytes=%zu maxrss_kib=%ld\n", src.size(), ru.ru_maxrss);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 3 && std::strcmp(argv[1], "--time") == 0) return do_time(argv[2]);
    if (argc == 3 && std::strcmp(argv[1], "--peak") == 0) return do_peak(argv[2]);
    std::fprintf(stderr, "usage: %s --time FILE | --peak FILE   (BENCH_RUNS=N sets timed runs)\n",
                 prog);
    return 2;
}
