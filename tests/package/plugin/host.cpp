// SPDX-License-Identifier: MIT
// A program that does not link fieldlog: it dlopen()s each plugin named on its command line
// (RTLD_NOW | RTLD_LOCAL, as applications load plugins), calls each one's fieldlog_plugin_run()
// with the plugin's file name while all are loaded, then dlcloses them. Exits 0 only if every
// step worked (dlerror() says what did not); run.sh checks the lines the plugins log.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {
using RunFn = int (*)(const char* name);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s plugin.so...\n", argv[0]);
        return 2;
    }
    std::vector<void*> handles;
    int status = 0;
    for (int i = 1; i < argc; ++i) {
        void* handle = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            std::fprintf(stderr, "host: dlopen %s: %s\n", argv[i], dlerror());
            return 1;
        }
        handles.push_back(handle);
    }
    for (int i = 1; i < argc; ++i) {
        auto run = reinterpret_cast<RunFn>(dlsym(handles[i - 1], "fieldlog_plugin_run"));
        if (run == nullptr) {
            std::fprintf(stderr, "host: dlsym %s: %s\n", argv[i], dlerror());
            return 1;
        }
        const char* slash = std::strrchr(argv[i], '/');
        if (run(slash != nullptr ? slash + 1 : argv[i]) != 0) {
            std::fprintf(stderr, "host: %s failed\n", argv[i]);
            status = 1;
        }
    }
    for (std::size_t i = 0; i < handles.size(); ++i) {
        if (dlclose(handles[i]) != 0) {
            std::fprintf(stderr, "host: dlclose %s: %s\n", argv[i + 1], dlerror());
            status = 1;
        }
    }
    return status;
}
