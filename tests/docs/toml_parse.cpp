// SPDX-License-Identifier: MIT
// Parses the TOML text on stdin with fieldlog's own reader (Config::parse), for
// doc_snippets.py: the docs' ```toml blocks, and probes whose "known keys" errors tell
// which keys each table takes. Prints "ok", or the ConfigError message and exits 1.
// Usage: fieldlog_doc_toml SOURCE (the name errors give, e.g. "README.md").
#include <iostream>
#include <iterator>
#include <string>

#include <fieldlog/config.hpp>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: fieldlog_doc_toml SOURCE < text.toml\n";
        return 2;
    }
    const std::string text{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    try {
        (void)fieldlog::Config::parse(text, argv[1]);
    } catch (const fieldlog::ConfigError& e) {
        std::cout << e.what() << '\n';
        return 1;
    }
    std::cout << "ok\n";
    return 0;
}
