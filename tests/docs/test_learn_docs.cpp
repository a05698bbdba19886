// test_learn_docs.cpp — docs/learn.md, the teacher's page of the learn track, lists every
// exercise there is: each learn/NN_name/ folder has its row in the page's table (linking its
// README), its four files (README.md, exercise.cpp, solution.cpp, test.cpp) and its
// learn_exercise() line in learn/CMakeLists.txt (the ctest pair learn.NN.solution / .stub), and
// every row names a folder that exists.
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "support/docs.hpp"

using namespace tapegrad::testing;

TEST_CASE("docs/learn.md: every exercise of learn/ has its row, its files and its tests", "[docs][learn]") {
  namespace fs = std::filesystem;
  const std::string page = read_text(kDocsDir + "/learn.md");
  const std::string cmake = read_text(kRepoRoot + "/learn/CMakeLists.txt");
  std::set<std::string> folders;
  for (const auto& entry : fs::directory_iterator(kRepoRoot + "/learn")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !std::regex_match(name, std::regex(R"(\d\d_\w+)"))) continue;
    folders.insert(name);
    INFO("learn/" << name);
    for (const char* file : {"README.md", "exercise.cpp", "solution.cpp", "test.cpp"})
      CHECK(fs::exists(entry.path() / file));
    const std::string number = name.substr(0, 2);
    CHECK(page.find("| " + std::to_string(std::stoi(number)) + " | [") != std::string::npos);
    CHECK(page.find("(../learn/" + name + "/README.md)") != std::string::npos);
    CHECK(cmake.find("learn_exercise(" + number + " " + name + " ") != std::string::npos);
    CHECK(read_text(entry.path().string() + "/test.cpp").find("\"[learn." + number + "]\"") != std::string::npos);
  }
  CHECK(folders.size() >= 3);
  // and no row for an exercise that is not there
  const std::regex row(R"(\(\.\./learn/(\d\d_\w+)/README\.md\))");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), row); it != std::sregex_iterator(); ++it)
    CHECK(folders.count((*it)[1].str()) == 1);
  CHECK(read_text(kDocsDir + "/index.md").find("(learn.md)") != std::string::npos);
}
