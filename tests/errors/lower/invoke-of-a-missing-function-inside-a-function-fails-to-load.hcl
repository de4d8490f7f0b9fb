function f {
  body = invoke("g", {})
}
