locals {
  name = "n"
}
resource x {
  body = { n = nmae }
}
