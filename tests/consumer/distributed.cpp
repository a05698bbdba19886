// distributed.cpp — uses an installed tapegrad::distributed, started without mpirun: a world
// of one process, where averaging a gradient over the ranks leaves it as it was.
#include <tapegrad/distributed/ddp.hpp>
#include <tapegrad/tapegrad.hpp>

#include <cstdio>
#include <vector>

int main() {
  using namespace tapegrad;
  distributed::ProcessGroup group;
  nn::Linear model(2, 1);
  distributed::DistributedDataParallel ddp(model, group);
  model.forward(tensor({1, 2}, {1, 2})).sum().backward();
  ddp.average_gradients();

  const std::vector<double> dw = model.named_parameters()[0].second.grad().to_vector();
  std::printf("rank %d of %d, dy/dw = (%g, %g)\n", group.rank(), group.world_size(), dw[0], dw[1]);
  const bool ok = group.rank() == 0 && group.world_size() == 1 && dw == std::vector<double>{1, 2};
  if (!ok) std::printf("expected rank 0 of 1, dy/dw = (1, 2)\n");
  return ok ? 0 : 1;
}
