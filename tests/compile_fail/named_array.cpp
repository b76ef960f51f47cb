// SPDX-License-Identifier: MIT
// A named Array points at a brace list that ended with its own line: refused as a value, kept
// in a std::vector<Field> too.
#include <vector>

#include <fieldlog/fieldlog.hpp>

std::vector<fieldlog::Field> kept() {
    fieldlog::Array ids{1, 2, 3};
    return {{"ids", ids}};
}
