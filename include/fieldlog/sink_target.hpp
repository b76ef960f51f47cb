// SPDX-License-Identifier: MIT
// SinkConfig::target: what configure() makes a sink from. Either a sink's options (a
// FileSinkOptions, or a program's own options type), which configure() turns into a sink and
// compares across configurations to keep the sink it made, or a sink the program made itself.
// It knows no sink type: an options type brings its own make_sink() and sink_destination(),
// found by argument-dependent lookup in the header that declares it.
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>

#include "fieldlog/export.hpp"
#include "fieldlog/sink.hpp"

namespace fieldlog {

/// Where a sink writes, as configure() names it and checks it.
struct FIELDLOG_API SinkDestination {
    std::string_view kind;  ///< "file", "udp": a literal (it names the sink in metrics)
    std::string target{};   ///< the path or address; empty when there is none
    /// Two sinks cannot share it (a stream, a file): configure() refuses a second sink to an
    /// equal one. Datagrams and connections can be shared.
    bool exclusive = false;
};

/// An options type SinkTarget takes: comparable, and with, beside it in its namespace,
/// `std::shared_ptr<Sink> make_sink(const Options&)` (throws what stops it, its what() saying
/// why) and `SinkDestination sink_destination(const Options&)`.
template <typename Options>
concept SinkOptions = std::copy_constructible<Options> && std::equality_comparable<Options> &&
                      requires(const Options& options) {
                          { make_sink(options) } -> std::convertible_to<std::shared_ptr<Sink>>;
                          { sink_destination(options) } -> std::convertible_to<SinkDestination>;
                      };

/// A sink's options, or a sink the program made (custom, memory).
/// NOTE: configure() closes the sinks it made when they leave the running set; a sink the
/// program made is only flushed then, so it may be configured again (shutdown() and the
/// program's end close it too).
class FIELDLOG_API SinkTarget {
public:
    /// One stdout sink.
    SinkTarget();
    template <typename Options>
        // A SinkTarget is copied, not held: checking it as options would recurse.
        requires(!std::same_as<Options, SinkTarget> && SinkOptions<Options>)
    SinkTarget(Options options)  // NOLINT: implicit, for `.target = FileSinkOptions{…}`
        : options_(std::make_shared<const Held<Options>>(std::move(options))) {}
    template <std::derived_from<Sink> S>
    SinkTarget(std::shared_ptr<S> sink)  // NOLINT: implicit, for `.target = sink`
        : sink_(std::move(sink)) {}

    /// The options, when they are of type `Options`; else nullptr.
    template <typename Options>
    [[nodiscard]] const Options* options() const noexcept {
        return options_ && options_->type() == typeid(Options) ? static_cast<const Options*>(options_->get()) : nullptr;
    }
    /// The sink the program made; nullptr when the target is options.
    [[nodiscard]] const std::shared_ptr<Sink>& sink() const noexcept { return sink_; }

    /// A new sink from the options, or the program's. Throws what make_sink() throws, and
    /// std::invalid_argument for an empty std::shared_ptr<Sink>.
    [[nodiscard]] std::shared_ptr<Sink> make() const;
    /// Where the sink writes; for a program's sink, what its info() says.
    [[nodiscard]] SinkDestination destination() const;
    /// Whether the two write to one place that two sinks cannot share: an exclusive
    /// destination, or one Sink object.
    [[nodiscard]] bool shares_destination(const SinkTarget& other) const;

    /// Equal options of one type, or one Sink object: configure() keeps the sink it has.
    [[nodiscard]] bool same_as(const SinkTarget& other) const;
    friend bool operator==(const SinkTarget& a, const SinkTarget& b) { return a.same_as(b); }

private:
    struct HeldOptions {
        HeldOptions() = default;
        HeldOptions(const HeldOptions&) = delete;
        HeldOptions& operator=(const HeldOptions&) = delete;
        virtual ~HeldOptions() = default;
        [[nodiscard]] virtual const std::type_info& type() const noexcept = 0;
        [[nodiscard]] virtual const void* get() const noexcept = 0;
        [[nodiscard]] virtual bool equals(const HeldOptions& other) const = 0;
        [[nodiscard]] virtual std::shared_ptr<Sink> make() const = 0;
        [[nodiscard]] virtual SinkDestination destination() const = 0;
    };
    template <typename Options>
    struct Held final : HeldOptions {
        explicit Held(Options held) : options(std::move(held)) {}
        const std::type_info& type() const noexcept override { return typeid(Options); }
        const void* get() const noexcept override { return &options; }
        bool equals(const HeldOptions& other) const override {
            return other.type() == typeid(Options) && *static_cast<const Options*>(other.get()) == options;
        }
        std::shared_ptr<Sink> make() const override { return make_sink(options); }
        SinkDestination destination() const override { return sink_destination(options); }
        Options options;
    };

    std::shared_ptr<const HeldOptions> options_;  ///< shared: copies of a Config stay cheap
    std::shared_ptr<Sink> sink_;
};

}  // namespace fieldlog
