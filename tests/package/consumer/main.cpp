// Logs one record through the installed package; run.sh checks the line.
#include <fieldlog/fieldlog.hpp>

int main() {
    fieldlog::configure(fieldlog::Config{});
    fieldlog::get("consumer").with({{"package", "installed"}}).info("hello from an installed fieldlog", {{"answer", 42}});
    fieldlog::shutdown();
}
