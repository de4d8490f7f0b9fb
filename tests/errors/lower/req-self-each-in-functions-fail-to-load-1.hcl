function f {
  body = req.composite
}
