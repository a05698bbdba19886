// claims_budget.hpp — the report's section on how each claim's figure moves with the budget
// of training steps (claims_budget.cpp). Internal to the depth study's report.
#pragma once

namespace depth_study {

struct Writer;
void budget_section(Writer& w);

}  // namespace depth_study
