#include "dispatch/pipeline.hpp"

namespace fieldlog::detail {

void write_to_sinks(const Channel& channel, const RecordView& record) noexcept {
    for (const Route& route : channel.routes) {
        if (record.level < route.level) continue;
        const std::lock_guard lock(route.handle->mutex);
        route.handle->sink->write_record(record);
    }
}

void Pipeline::dispatch(const Channel& channel, const RecordView& record) const noexcept {
    write_to_sinks(channel, record);
}

void Pipeline::flush() const noexcept {
    for (const auto& handle : handles) {
        const std::lock_guard lock(handle->mutex);
        handle->sink->flush();
    }
}

}  // namespace fieldlog::detail
