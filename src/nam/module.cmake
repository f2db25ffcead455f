# nam: .nam model files are JSON (nlohmann-json, header-only).
find_package(nlohmann_json 3.9 CONFIG REQUIRED)
target_link_libraries(sigpu PRIVATE nlohmann_json::nlohmann_json)
