// SVG charts for `plexus bench --plot FILE`: plain SVG 1.1 text that a browser opens, no
// scripts and no external fonts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace plexus::app {

// One horizontal bar per bench row (kernel, backend, device): its ratio to the baseline, with
// a line at 1.0; a row without a ratio is listed with its reason instead of a bar.
std::string ratio_chart(const nlohmann::json& rows, const std::string& title);

// One stacked bar per run: its phases in milliseconds, each with a legend colour.
struct Stack {
    std::string label;
    std::vector<std::pair<std::string, double>> parts;
};
std::string phase_chart(const std::vector<Stack>& stacks, const std::string& title);

// Writes `svg` to `path`; throws plexus::Error (InvalidArgument) naming the file on failure.
void write_plot(const std::string& path, const std::string& svg);

} // namespace plexus::app
