locals {
  fn = "f"
  r  = invoke(fn, {})
}
