// The two charts of `plexus bench --plot`: ratios to baseline as bars against a 1.0 line, and
// first-launch phases as stacked bars. Coordinates are computed here; the SVG is written by hand.
#include "plot.hpp"

#include "plexus/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace plexus::app {
namespace {

constexpr int kLabelWidth = 330, kPlotWidth = 520, kRow = 24, kTop = 44, kRight = 90;
const char* const kColours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

std::string escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '&')
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else if (c == '"')
            out += "&quot;";
        else
            out += c;
    }
    return out;
}

std::string num(double v, int digits = 2) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string header(int width, int height, const std::string& title) {
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << escape(title)
      << "</text>\n";
    return s.str();
}

} // namespace

std::string ratio_chart(const nlohmann::json& rows, const std::string& title) {
    double top = 1.2;
    for (const auto& r : rows)
        if (r.contains("ratio") && r["ratio"].is_number())
            top = std::max(top, r["ratio"].get<double>() * 1.05);
    const int height = kTop + int(rows.size()) * kRow + 40,
              width = kLabelWidth + kPlotWidth + kRight;
    auto x_of = [&](double v) { return kLabelWidth + v / top * kPlotWidth; };
    std::ostringstream s;
    s << header(width, height, title);
    // Grid lines every 0.25, the 1.0 line (parity with the baseline) in red.
    for (double g = 0; g <= top + 1e-9; g += 0.25) {
        const bool one = std::fabs(g - 1.0) < 1e-9;
        s << "<line x1=\"" << num(x_of(g)) << "\" y1=\"" << kTop - 6 << "\" x2=\"" << num(x_of(g))
          << "\" y2=\"" << height - 30 << "\" stroke=\"" << (one ? "#d62728" : "#dddddd")
          << "\" stroke-width=\"" << (one ? 2 : 1) << "\"/>\n<text x=\"" << num(x_of(g))
          << "\" y=\"" << height - 14 << "\" text-anchor=\"middle\">" << num(g) << "</text>\n";
    }
    int y = kTop;
    for (const auto& r : rows) {
        // "against": a second row of the same kernel beside another baseline (OpenBLAS).
        const std::string against =
            r.contains("against") ? " vs " + r.value("against", std::string()) : "";
        const std::string label = r.value("kernel", std::string("?")) + against + " - " +
                                  r.value("backend", std::string("?")) + " (" +
                                  r.value("device", std::string("?")).substr(0, 28) + ")";
        s << "<text x=\"" << kLabelWidth - 8 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">"
          << escape(label) << "</text>\n";
        if (r.contains("ratio") && r["ratio"].is_number()) {
            const double v = r["ratio"].get<double>();
            s << "<rect x=\"" << kLabelWidth << "\" y=\"" << y + 3 << "\" width=\""
              << num(x_of(v) - kLabelWidth) << "\" height=\"" << kRow - 6 << "\" fill=\""
              << (r.value("verified", false) ? kColours[0] : "#999999") << "\"><title>"
              << escape(label + ": " + num(v) + " of " + r["baseline"].value("name", std::string()))
              << "</title></rect>\n<text x=\"" << num(x_of(v) + 4) << "\" y=\"" << y + 15 << "\">"
              << num(v) << (r.value("verified", false) ? "" : " (not verified)") << "</text>\n";
        } else {
            std::string why = r.contains("error") ? r["error"].get<std::string>() : "no baseline";
            if (r.contains("baseline") && r["baseline"].contains("error"))
                why = r["baseline"]["error"].get<std::string>();
            s << "<text x=\"" << kLabelWidth + 4 << "\" y=\"" << y + 15 << "\" fill=\"#888888\">"
              << escape(why.substr(0, 80)) << "</text>\n";
        }
        y += kRow;
    }
    s << "</svg>\n";
    return s.str();
}

std::string phase_chart(const std::vector<Stack>& stacks, const std::string& title) {
    double top = 0;
    std::vector<std::string> legend;
    for (const Stack& st : stacks) {
        double sum = 0;
        for (const auto& [name, ms] : st.parts) {
            sum += ms;
            if (std::find(legend.begin(), legend.end(), name) == legend.end())
                legend.push_back(name);
        }
        top = std::max(top, sum * 1.1);
    }
    if (top <= 0) top = 1;
    const int height = kTop + int(stacks.size()) * kRow + 40 + int(legend.size()) * 18,
              width = kLabelWidth + kPlotWidth + kRight;
    auto colour = [&](const std::string& name) {
        return kColours[size_t(std::find(legend.begin(), legend.end(), name) - legend.begin()) % 8];
    };
    std::ostringstream s;
    s << header(width, height, title);
    int y = kTop;
    for (const Stack& st : stacks) {
        s << "<text x=\"" << kLabelWidth - 8 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">"
          << escape(st.label) << "</text>\n";
        double x = kLabelWidth, sum = 0;
        for (const auto& [name, ms] : st.parts) {
            const double w = ms / top * kPlotWidth;
            s << "<rect x=\"" << num(x) << "\" y=\"" << y + 3 << "\" width=\"" << num(w)
              << "\" height=\"" << kRow - 6 << "\" fill=\"" << colour(name) << "\"><title>"
              << escape(name + ": " + num(ms) + " ms") << "</title></rect>\n";
            x += w;
            sum += ms;
        }
        s << "<text x=\"" << num(x + 4) << "\" y=\"" << y + 15 << "\">" << num(sum)
          << " ms</text>\n";
        y += kRow;
    }
    y += 16;
    for (const std::string& name : legend) {
        s << "<rect x=\"" << kLabelWidth << "\" y=\"" << y
          << "\" width=\"12\" height=\"12\" fill=\"" << colour(name) << "\"/><text x=\""
          << kLabelWidth + 18 << "\" y=\"" << y + 11 << "\">" << escape(name) << "</text>\n";
        y += 18;
    }
    s << "</svg>\n";
    return s.str();
}

void write_plot(const std::string& path, const std::string& svg) {
    std::ofstream out(path, std::ios::trunc);
    out << svg;
    out.close();
    if (!out) throw Error(ErrorCode::InvalidArgument, "cannot write the plot to " + path);
}

} // namespace plexus::app
