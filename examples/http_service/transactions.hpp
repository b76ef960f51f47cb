// SPDX-License-Identifier: MIT
// The service's domain: what a POST /transactions body holds, the checks it must pass, the fee
// quoted in the reply, and the settlement work the worker pool does afterwards. Pure functions,
// no logging and no heap.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace http_service {

/// A transaction as read from a request body; the views point into the body (or the scratch
/// buffer given to parse_transaction).
struct Transaction {
    std::string_view account;   ///< 1 to 64 bytes
    std::string_view merchant;  ///< 1 to 64 bytes
    std::string_view currency;  ///< 3 upper-case ASCII letters (ISO 4217 shape)
    double amount = 0;          ///< more than 0, at most 1,000,000
};

inline constexpr std::size_t kMaxNameBytes = 64;

/// Reads and checks a body like {"account":"acc-7","amount":12.5,"currency":"EUR","merchant":"m-1"}.
/// Returns "" on success, else what is wrong (a static string, sent back in the 400 reply).
std::string_view parse_transaction(std::string_view body, Transaction& out, std::span<char> scratch) noexcept;

/// The fee quoted for `amount`, in cents: 1.5 %, at least 5 cents, rounded half up.
[[nodiscard]] std::int64_t fee_cents(double amount) noexcept;

/// The result of settling one transaction.
struct Settlement {
    std::uint32_t risk_score = 0;  ///< 0 to 999
    bool flagged = false;          ///< held for review
};

/// The "little work" of the worker pool: a deterministic risk score from the transaction's
/// fields (a few rounds of hashing), flagged above 950 or for amounts over 10,000.
[[nodiscard]] Settlement settle(std::string_view account, std::string_view merchant, double amount) noexcept;

}  // namespace http_service
