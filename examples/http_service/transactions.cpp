// SPDX-License-Identifier: MIT
// The transaction rules of the example service (see transactions.hpp).
#include "transactions.hpp"

#include <array>
#include <cmath>

#include "flat_json.hpp"

namespace http_service {

std::string_view parse_transaction(std::string_view body, Transaction& out, std::span<char> scratch) noexcept {
    std::array<JsonMember, 16> members;
    const FlatObject object = parse_flat_object(body, members, scratch);
    if (!object.ok()) return object.error;
    const std::span<const JsonMember> found(members.data(), object.size);

    bool seen[4] = {};
    for (const JsonMember& m : found) {
        const bool is_number = m.type == JsonType::number;
        const bool is_string = m.type == JsonType::string;
        if (m.key == "account") {
            if (seen[0] || !is_string) return "account must be one string";
            seen[0] = true;
            out.account = m.text;
        } else if (m.key == "merchant") {
            if (seen[1] || !is_string) return "merchant must be one string";
            seen[1] = true;
            out.merchant = m.text;
        } else if (m.key == "currency") {
            if (seen[2] || !is_string) return "currency must be one string";
            seen[2] = true;
            out.currency = m.text;
        } else if (m.key == "amount") {
            if (seen[3] || !is_number) return "amount must be one number";
            seen[3] = true;
            out.amount = m.number;
        }
    }
    if (!seen[0] || !seen[1] || !seen[2] || !seen[3]) return "account, merchant, currency and amount are required";
    if (out.account.empty() || out.account.size() > kMaxNameBytes) return "account must have 1 to 64 bytes";
    if (out.merchant.empty() || out.merchant.size() > kMaxNameBytes) return "merchant must have 1 to 64 bytes";
    if (out.currency.size() != 3) return "currency must be 3 upper-case letters";
    for (const char c : out.currency) {
        if (c < 'A' || c > 'Z') return "currency must be 3 upper-case letters";
    }
    if (!(out.amount > 0) || out.amount > 1'000'000) return "amount must be more than 0 and at most 1000000";
    return {};
}

std::int64_t fee_cents(double amount) noexcept {
    const auto fee = static_cast<std::int64_t>(std::floor(amount * 1.5 + 0.5));  // amount * 100 * 1.5 %
    return fee < 5 ? 5 : fee;
}

namespace {

std::uint64_t fnv1a(std::uint64_t hash, std::string_view bytes) noexcept {
    for (const char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

}  // namespace

Settlement settle(std::string_view account, std::string_view merchant, double amount) noexcept {
    const auto cents = static_cast<std::uint64_t>(std::floor(amount * 100 + 0.5));
    std::uint64_t hash = fnv1a(0xcbf29ce484222325ULL, account);
    hash = fnv1a(hash, merchant);
    for (int round = 0; round < 64; ++round) {  // stands in for a lookup against rules
        hash ^= cents + static_cast<std::uint64_t>(round);
        hash *= 0x9E3779B97F4A7C15ULL;
        hash ^= hash >> 29;
    }
    Settlement s;
    s.risk_score = static_cast<std::uint32_t>(hash % 1000);
    s.flagged = s.risk_score > 950 || amount > 10'000;
    return s;
}

}  // namespace http_service
