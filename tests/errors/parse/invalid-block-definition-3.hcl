resource "a" "b"
{
}