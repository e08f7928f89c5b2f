# context-kernel's launcher for IRkernel: IRkernel::main(), made safe to interrupt, with the
# project's libraries.
#
# IRkernel catches SIGINT only in its idle poll and around the user's code. A SIGINT that lands
# while it handles a request (the ~20-50 ms before the code runs, or while it sends output or the
# reply) reaches R's top level and R exits ("Execution halted"): a timeout or an agent's interrupt
# then kills the session's state. So: interrupts are held off while IRkernel handles a request or
# sends a message, allowed while the user's code runs (a held one fires there and aborts the cell),
# and one that still escapes only restarts the main loop. Uses IRkernel internals (1.3.x); if they
# are not as expected, IRkernel runs unguarded. Everything lives in local(): the user's code runs
# in .GlobalEnv and must not see (or rm()) the kernel object.
#
# The project's libraries. R starts in the project directory, so it has read the project's
# .Renviron (R_LIBS_USER, say) as R does there. The user profile (R_PROFILE_USER, else the
# project's .Rprofile, else ~/.Rprofile) runs here rather than in R's startup (the kernelspec passes
# --no-init-file) so that the libraries R started with are known before it runs: a profile that
# activates renv replaces them with the project's, and IRkernel, installed in the former, is then
# loaded from there unless the project has its own (its dependencies from the project's libraries
# when they have them). A project with an renv library (renv.lock, renv/library/[<os>/]R-<x.y>/
# <platform>, or RENV_PATHS_LIBRARY) that no profile activated gets it as renv's activation would:
# first, then R's system library only. Given --library-paths instead of a connection file, it
# prints .libPaths() and which rule made them (for doctor) and exits.
local({
  started_with <- .libPaths()
  project <- getwd()  # the project directory, whatever the profile does with setwd()
  profile <- Sys.getenv("R_PROFILE_USER")
  if (!nzchar(profile)) profile <- if (file.exists(".Rprofile")) ".Rprofile" else "~/.Rprofile"
  profile <- path.expand(profile)
  if (file.exists(profile)) {
    # as at R's startup: an error ends the profile, not the session
    tryCatch(sys.source(profile, envir = globalenv(), toplevel.env = globalenv()),
             error = function(e) message("Error in the R profile ", profile, ": ", conditionMessage(e)))
    if (exists(".First", envir = globalenv(), mode = "function", inherits = FALSE))
      try(get(".First", envir = globalenv())())
  }

  renv_project <- any(file.exists(file.path(project, c("renv.lock", file.path("renv", "activate.R")))))
  version <- sprintf("R-%s.%s", R.version$major, sub("[.].*", "", R.version$minor))
  root <- path.expand(Sys.getenv("RENV_PATHS_LIBRARY", file.path(project, "renv", "library")))
  if (!grepl("^(/|[A-Za-z]:)", root)) root <- file.path(project, root)  # relative: to the project
  found <- if (renv_project) Sys.glob(c(file.path(root, version, R.version$platform),
                                         file.path(root, "*", version, R.version$platform))) else character()
  found <- found[dir.exists(found)]
  renv_library <- if (length(found)) normalizePath(found[[1]]) else character()
  active <- nzchar(Sys.getenv("RENV_PROJECT")) || "renv" %in% loadedNamespaces() ||
    (length(renv_library) > 0 && renv_library %in% normalizePath(.libPaths()))
  renv <- if (active) "profile" else if (length(renv_library)) "renv.lock" else if (renv_project) "unrestored" else "none"
  if (renv == "renv.lock") .libPaths(renv_library, include.site = FALSE)

  irkernel <- find.package("IRkernel", quiet = TRUE)
  if (!length(irkernel)) irkernel <- find.package("IRkernel", lib.loc = started_with, quiet = TRUE)
  if (identical(commandArgs(TRUE)[1], "--library-paths")) {
    paths <- .libPaths()
    cat(sprintf("ck-library\t%s\t%s\n",
                c("renv", rep("path", length(paths)), "irkernel", "version", "renv-library"),
                c(renv, paths, c(irkernel, "")[1], version, c(renv_library, "")[1])), sep = "")
    quit(save = "no")
  }
  # IRkernel's dependencies (jsonlite, repr, ...) as the project has them, else as R's own libraries do
  if (length(irkernel) && !isNamespaceLoaded("IRkernel"))
    loadNamespace("IRkernel", lib.loc = unique(c(.libPaths(), started_with)))
  # "there is no package called 'x'" says where R looked: which libraries are the project's is not
  # obvious (renv hides the others). A method, not a handler: IRkernel trims tracebacks by frame count.
  registerS3method("conditionMessage", "packageNotFoundError", envir = baseenv(), function(c) {
    libs <- if (length(c$lib.loc)) c$lib.loc else .libPaths()
    paste0(c$message, "; looked in .libPaths(): ", paste(libs, collapse = ", "))
  })
})
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
