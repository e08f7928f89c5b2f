# context-kernel's launcher for IRkernel: IRkernel::main(), made safe to interrupt.
#
# IRkernel catches SIGINT only in its idle poll and around the user's code. A SIGINT that lands
# while it handles a request (the ~20-50 ms before the code runs, or while it sends output or the
# reply) reaches R's top level and R exits ("Execution halted"): a timeout or an agent's interrupt
# then kills the session's state. So: interrupts are held off while IRkernel handles a request or
# sends a message, allowed while the user's code runs (a held one fires there and aborts the cell),
# and one that still escapes only restarts the main loop. Uses IRkernel internals (1.3.x); if they
# are not as expected, IRkernel runs unguarded. Everything lives in local(): the user's code runs
# in .GlobalEnv and must not see (or rm()) the kernel object.
local({
  kernel <- IRkernel:::Kernel$new(connection_file = commandArgs(TRUE)[[1]])
  tryCatch({
    kernel$run  # installs run() and the methods it calls, so the replacement below sticks
    executor <- kernel$executor
    send <- executor$send_response
    executor$send_response <- function(...) base::suspendInterrupts(send(...))
    # Executor$execute calls evaluate() twice: once without envir (a probe that measures the
    # frame depth to trim tracebacks with, kept uninterruptible) and once with envir = .GlobalEnv
    # for the user's code. Both go through the same number of frames, so the trimming still fits.
    assign("evaluate", envir = as.environment(executor), function(input, envir, ...) {
      if (missing(envir)) base::suspendInterrupts(evaluate::evaluate(input, ...))
      else base::allowInterrupts(evaluate::evaluate(input, envir = envir, ...))
    })
    shell <- kernel$handle_shell
    assign("handle_shell", envir = as.environment(kernel), function() base::suspendInterrupts(shell()))
  }, error = function(e) message("context-kernel: IRkernel runs unguarded: ", conditionMessage(e)))
  repeat tryCatch(kernel$run(), interrupt = function(e) NULL)
})
