// mlp_fit.cpp — fits y = sin(x) on [-3, 3] with a small MLP, using only the autograd API.
//
//   x: (N, 1) -> linear -> tanh -> linear -> tanh -> linear -> pred: (N, 1)
//   loss = mean((pred - y)^2), then plain gradient descent on every weight: w -= lr * dw
//
// Run: build/examples/mlp_fit --steps 3000 --lr 0.02  (--help lists the options)
#include <tapegrad/tapegrad.hpp>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cli_checks.hpp"

using namespace tapegrad;

// A (rows, cols) weight drawn from N(0, 1/cols), so that tanh starts in its linear range.
// It is a leaf that requires grad: backward() fills its grad().
Tensor init_weight(std::int64_t rows, std::int64_t cols, Generator& gen) {
  return (randn({rows, cols}, gen) * (1.0 / std::sqrt(static_cast<double>(cols)))).requires_grad_();
}

int main(int argc, char** argv) {
  int steps = 3000, hidden = 32, threads = 0, print_every = 0;
  double lr = 0.02;
  std::uint64_t seed = 0;
  bool check = false;
  CLI::App app{"Fits y = sin(x) on [-3, 3] with a 1 -> H -> H -> 1 tanh MLP and plain SGD."};
  app.add_option("--steps", steps, "training steps")->check(cli::positive);
  app.add_option("--lr", lr, "learning rate");
  app.add_option("--hidden", hidden, "width H of both hidden layers")->check(cli::positive);
  app.add_option("--seed", seed, "seed of the weight initialization");
  app.add_option("--threads", threads,
                 "threads for OpenMP and OpenBLAS (0: TAPEGRAD_NUM_THREADS or all cores)");
  app.add_option("--print-every", print_every, "print the loss every N steps (0: steps / 10)");
  app.add_flag("--check", check,
               "exit 1 unless the final loss is below a tenth of the initial one");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) set_num_threads(threads);
  if (print_every <= 0) print_every = steps >= 10 ? steps / 10 : 1;

  // Data: N evenly spaced points x: (N, 1) and their targets y = sin(x): (N, 1).
  const std::int64_t N = 256;
  std::vector<double> xs(N), ys(N);
  for (std::int64_t i = 0; i < N; ++i) {
    xs[i] = -3.0 + 6.0 * static_cast<double>(i) / (N - 1);
    ys[i] = std::sin(xs[i]);
  }
  const Tensor x = tensor(xs, {N, 1}), y = tensor(ys, {N, 1});

  // Parameters: weights (out, in) as in torch.nn.Linear, biases start at zero.
  Generator gen(seed);
  Tensor w1 = init_weight(hidden, 1, gen), b1 = zeros({hidden}).requires_grad_();
  Tensor w2 = init_weight(hidden, hidden, gen), b2 = zeros({hidden}).requires_grad_();
  Tensor w3 = init_weight(1, hidden, gen), b3 = zeros({1}).requires_grad_();
  std::vector<Tensor> params = {w1, b1, w2, b2, w3, b3};
  std::printf("fitting sin(x): 1 -> %d -> %d -> 1 tanh MLP, %d steps, lr %g, threads %d\n", hidden,
              hidden, steps, lr, get_num_threads());

  double initial_loss = 0.0, loss_value = 0.0;
  for (int step = 0; step < steps; ++step) {
    Tensor h1 = tanh(linear(x, w1, b1));   // (N, H)
    Tensor h2 = tanh(linear(h1, w2, b2));  // (N, H)
    Tensor pred = linear(h2, w3, b3);      // (N, 1)
    Tensor diff = pred - y;
    Tensor loss = (diff * diff).mean();    // mean squared error, a 0-dim tensor
    loss.backward();                       // dloss/dp into p.grad() for every parameter p

    {  // SGD on the raw floats; the guard keeps these updates off the tape.
      NoGradGuard no_grad;
      for (Tensor& p : params) {
        float* w = p.data<float>();
        const float* dw = p.grad().data<float>();
        for (std::int64_t i = 0; i < p.numel(); ++i) w[i] -= static_cast<float>(lr) * dw[i];
        p.reset_grad();  // gradients accumulate (+=): clear them for the next step
      }
    }

    loss_value = loss.item();
    if (step == 0) initial_loss = loss_value;
    if (step % print_every == 0) std::printf("step %5d  loss %.6f\n", step, loss_value);
  }
  std::printf("final loss %.6f (initial %.6f)\n", loss_value, initial_loss);

  if (check && !(loss_value < initial_loss / 10)) {
    std::printf("check failed: the loss did not fall below a tenth of its initial value\n");
    return 1;
  }
  return 0;
}
