#include "record/bound_fields.hpp"

#include "control/state.hpp"
#include "encode/encode.hpp"
#include "record/buffer.hpp"

namespace fieldlog::detail {

std::shared_ptr<const BoundFields> make_bound_fields(const BoundFields* parent, std::span<const Field> fields) {
    auto bound = std::make_shared<BoundFields>();
    const auto out = std::make_unique<Buffer>();
    const auto scratch = std::make_unique<Buffer>();
    const EncoderOptions running = encoder_options_in_force();
    for (int f = 0; f < format_count; ++f) {
        EncoderOptions options = running;
        options.format = static_cast<Format>(f);
        out->clear();
        out->append(bound_bytes(parent, options.format));
        encode_fields(options, *out, *scratch, fields);
        bound->encoded[static_cast<std::size_t>(f)] = std::string(out->view());
    }
    return bound;
}

}  // namespace fieldlog::detail
