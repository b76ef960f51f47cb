// Logger::with's cold half: encode the child's fields once per format (see bound_fields.hpp).
#include "record/bound_fields.hpp"

#include <atomic>

#include "control/state.hpp"
#include "encode/encode.hpp"
#include "record/buffer.hpp"

namespace fieldlog::detail {

std::shared_ptr<const BoundFields> make_bound_fields(const BoundFields* parent, std::span<const Field> fields) {
    static std::atomic<std::uint64_t> next_id{1};
    auto bound = std::make_shared<BoundFields>();
    bound->id = next_id.fetch_add(1, std::memory_order_relaxed);
    const auto out = std::make_unique<Buffer>();
    const auto scratch = std::make_unique<Buffer>();
    const EncoderOptions running = encoder_options_in_force();
    for (int f = 0; f < format_count; ++f) {
        EncoderOptions options = running;
        options.format = static_cast<Format>(f);
        const Segment inherited = bound_segment(parent, options.format);
        BoundFields::Encoded& e = bound->encoded[static_cast<std::size_t>(f)];
        // One member per field, unless a user type writes keys at the top level: then again.
        FieldsRun run{.members = {}, .count = inherited.members.size() + fields.size(), .mask = 0};
        do {
            e.members.resize(run.count);
            run.members = e.members;
            out->clear();
            encode_fields(options, *out, *scratch, inherited, fields, run);
        } while (run.count > e.members.size());
        e.members.resize(run.count);
        e.mask = run.mask;
        e.bytes = std::string(out->view());
    }
    return bound;
}

}  // namespace fieldlog::detail
